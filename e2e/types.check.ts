// Compile-time checks of mailroomjs/playwright's types, run by `npm run
// typecheck` (never executed: not a spec file). Each `@ts-expect-error`
// fails the typecheck if the line below it starts to compile.
import { test as playwrightTest, expect as playwrightExpect, mergeTests, mergeExpects } from '@playwright/test';
import { test, expect, mailroomFixtures, mailroomMatchers, openMail, type Inbox, type Mail } from 'mailroomjs/playwright';

test('types', async ({ inbox, page }) => {
  const typed: Inbox = inbox;
  const mail: Mail = await inbox.expectMail({ subject: /confirm/i });
  const link: string | undefined = mail.links[0];
  void [typed, link];

  await expect(inbox).toReceiveMail();
  await expect(inbox).toReceiveMail({ subject: 'Welcome' }, { timeout: 10_000 });
  await expect(inbox).not.toReceiveMail({ subject: 'Error' }, { within: 2_000 });

  // @ts-expect-error toReceiveMail takes an Inbox, not a number
  await expect(42).toReceiveMail();
  // @ts-expect-error nor a page
  await expect(page).toReceiveMail();
  // @ts-expect-error nor a mail
  await expect(mail).toReceiveMail();
  // @ts-expect-error filters name from, to, subject or where
  await expect(inbox).toReceiveMail({ title: 'Welcome' });
  // @ts-expect-error the budget is in milliseconds
  await expect(inbox).toReceiveMail({}, { timeout: '10s' });
  // Playwright's own matchers stay available on an inbox
  expect(inbox).toBeDefined();

  const report = await mail.check({ only: ['html'], html: { clients: ['gmail', 'outlook.windows'] } });
  const ok: boolean = report.ok;
  void ok;
  await expect(mail).toPassMailChecks();
  await expect(mail).toPassMailChecks({ skip: ['links'], failOn: 'warning', links: { timeout: 2_000 } });
  // @ts-expect-error toPassMailChecks takes a Mail, not an Inbox
  await expect(inbox).toPassMailChecks();
  // @ts-expect-error failOn is 'error' or 'warning'
  await expect(mail).toPassMailChecks({ failOn: 'never' });
  // @ts-expect-error checks are named
  await mail.check({ skip: ['link'] });

  const text: string = mail.snapshot({ masks: { 'order number': /#\d{6}/, ref: 'ACME-77', date: false }, headers: ['X-Campaign'] });
  expect(text).toMatchSnapshot('confirm.txt');
  // @ts-expect-error a mask is a RegExp, a string or false
  mail.snapshot({ masks: { date: true } });
  await openMail(page, mail, { colorScheme: 'dark', width: 'phone' });
  await openMail(page, mail, { colorScheme: 'light', width: 600 });
  // @ts-expect-error the width is 'phone' or a number of pixels
  await openMail(page, mail, { width: 'tablet' });
  // @ts-expect-error the color scheme is 'light' or 'dark'
  await openMail(page, mail, { colorScheme: 'no-preference' });

  await inbox.smtp.greylist({ minDelay: 2_000 });
  await inbox.smtp.throttle({ limit: 2, per: 60_000 });
  await inbox.smtp.defer({ code: 451, enhanced: '4.7.1', times: 2, stage: 'data' });
  await inbox.smtp.reject({ code: 550 });
  await inbox.smtp.slow({ delayMs: 3_000 });
  await inbox.smtp.disconnect({ stage: 'data' });
  const when: Date = (await inbox.smtp.attempts())[0]!.at;
  void when;
  await expect(inbox).toHaveBeenRetried({ atLeast: 1, atMost: 3, within: 5_000, from: /acme/ });
  await expect(inbox).not.toHaveBeenRetried({ within: 2_000 });
  await expect(inbox).toHaveBackedOff({ minGap: 1_000, tolerance: 0.5 });
  // @ts-expect-error the SMTP matchers take an Inbox, not a number
  await expect(42).toHaveBeenRetried();
  // @ts-expect-error nor a page
  await expect(page).toHaveBackedOff();
  // @ts-expect-error the window is in milliseconds
  await expect(inbox).toHaveBeenRetried({ within: '5s' });
  // @ts-expect-error codes are numbers
  await inbox.smtp.defer({ code: '451' });
  // @ts-expect-error a throttle needs its limit
  await inbox.smtp.throttle({ per: 1_000 });
});

// Composing with a project's own fixtures and matchers.

const own = playwrightTest.extend<{ user: string }>({ user: async ({}, use) => use('ada') });
const merged = mergeTests(own, test);
const mergedExpect = mergeExpects(playwrightExpect, expect);
const extended = own.extend(mailroomFixtures);
const extendedExpect = playwrightExpect.extend(mailroomMatchers);

merged('merged', async ({ inbox, user, mailroom }) => {
  const timeout: number | undefined = mailroom.timeout;
  void [user, timeout];
  await mergedExpect(inbox).toReceiveMail({ subject: 'Welcome' });
  // @ts-expect-error still only an Inbox
  await mergedExpect('inbox').toReceiveMail();
});
extended('extended', async ({ inbox, user }) => {
  void user;
  await extendedExpect(inbox).not.toReceiveMail({ from: /acme/ }, { within: 1_000 });
});
extended.use({ mailroom: { keepOnFailure: true } });
// @ts-expect-error options are checked
extended.use({ mailroom: { keepOnFailure: 'yes' } });

test('private fixtures stay private', async ({ inbox }) => {
  void inbox;
});
// @ts-expect-error the deadline clock is not part of the public fixtures
test('no private fixture', async ({ _mailroomTimeLeft }) => void _mailroomTimeLeft);
