// Compile-time checks of mailroom/playwright's types, run by `npm run
// typecheck` (never executed: not a spec file). Each `@ts-expect-error`
// fails the typecheck if the line below it starts to compile.
import { test, expect, type Inbox, type Mail } from 'mailroom/playwright';

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
});
