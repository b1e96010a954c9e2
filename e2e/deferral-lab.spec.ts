// The SMTP deferral lab through real Chromium: the embedded server greylists,
// throttles and refuses the demo app's mail for one test's address, and the
// app's outbound queue (retries after 1 s, doubling to 4 s, with jitter; see
// e2e/servers.ts) is judged by the SMTP matchers. Each test's rules touch
// only its own address, so the four workers run these side by side with the
// rest of the suite.
import { test, expect, type Inbox } from 'mailroomjs/playwright';
import type { Page } from '@playwright/test';

async function signUp(page: Page, inbox: Inbox): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();
}

test('greylisted signup mail arrives after one retry', async ({ page, inbox }) => {
  await inbox.smtp.greylist({ minDelay: 1_000 });
  await signUp(page, inbox);
  // The first attempt was deferred; the app says so instead of pretending the mail went.
  await expect(page.getByRole('status').first()).toContainText('Sending “Confirm your email” is delayed: the mail server answered 451 4.7.1 Greylisted');

  const mail = await inbox.expectMail({ subject: 'Confirm' });
  await page.goto(mail.links[0]!);
  await expect(page.getByRole('heading', { name: 'Email confirmed' })).toBeVisible();
  await expect(inbox).toReceiveMail({ subject: 'Welcome' });

  await expect(inbox).toHaveBeenRetried({ atLeast: 1, atMost: 1, within: 1_500 });
  await expect(inbox).toHaveBackedOff();
  const attempts = await inbox.smtp.attempts();
  expect(attempts.map((a) => [a.stage, a.code, a.enhancedCode, a.outcome])).toEqual([
    ['rcpt', 451, '4.7.1', 'deferred'],
    ['data', 250, '2.6.0', 'accepted'],
    ['data', 250, '2.6.0', 'accepted'],
  ]);
  // The retry began no sooner than the greylisting window after the deferral (a lower bound).
  expect(attempts[1]!.beganAt!.getTime() - attempts[0]!.at.getTime()).toBeGreaterThanOrEqual(1_000);
});

test('a throttled burst is paced', async ({ page, inbox }) => {
  await signUp(page, inbox);
  const confirm = await inbox.expectMail({ subject: 'Confirm' });
  await page.goto(confirm.links[0]!);
  // From here on, two messages in any 3 s; the third gets 421 and the connection is closed.
  await inbox.smtp.throttle({ limit: 2, per: 3_000 });
  await page.getByRole('button', { name: 'Send me the 5 Acme tips' }).click();
  await expect(page.getByRole('heading', { name: 'Tips on their way' })).toBeVisible();
  await expect(page.getByRole('status').first()).toContainText('Sending “Acme tip 3 of 5” is delayed: the mail server answered 421 4.7.0 Too many messages');

  const tips = await inbox.expectMails(5, { subject: 'Acme tip' }, { timeout: 20_000 });
  expect(tips.map((m) => m.subject)).toEqual([1, 2, 3, 4, 5].map((n) => `Acme tip ${n} of 5`));
  // The queue waited after each 421 instead of hammering (toHaveBackedOff).
  // Tip 3 and tip 5 were turned away (twice each on an idle machine: after
  // 1 s the window is still full, after 2 s more it has moved on). How many
  // times exactly depends on when the app's real timers fire, so only that
  // they were turned away is asserted (the 421 comes before DATA: no subject).
  const attempts = await inbox.smtp.attempts();
  expect(attempts.filter((a) => a.code === 421).length).toBeGreaterThanOrEqual(2);
  await expect(inbox).toHaveBackedOff();

  await page.getByRole('link', { name: 'See the delivery status' }).click();
  await expect(page.getByRole('heading', { name: 'Delivery status' })).toBeVisible();
  await expect(page.getByRole('row').filter({ hasText: 'Acme tip' })).toHaveCount(5);
  await expect(page.getByRole('row').filter({ hasText: 'Delivered' })).toHaveCount(7);
});

test('a permanent 550 is not retried, and the app shows its bounce', async ({ page, inbox }) => {
  await inbox.smtp.reject({ code: 550, enhanced: '5.1.1', text: 'No such user here', times: 10 });
  await signUp(page, inbox);
  await expect(page.getByRole('alert').first()).toHaveText(
    `We could not deliver “Confirm your email” to ${inbox.address}. The mail server refused it for good: 550 5.1.1 No such user here (mailroom test rule: reject on ${inbox.address})`,
  );
  // The app's first retry would come a second after a deferral: three seconds of nothing is a refusal respected.
  await expect(inbox).not.toHaveBeenRetried({ within: 3_000 });
  await expect(inbox).toHaveBackedOff();
  expect((await inbox.smtp.attempts()).map((a) => [a.code, a.outcome])).toEqual([
    [550, 'rejected'],
    [550, 'rejected'],
  ]);

  await page.getByRole('link', { name: 'See the delivery status' }).click();
  await expect(page.getByRole('row').filter({ hasText: 'Could not deliver' })).toHaveCount(2);
});

// Four tests with different rules, run side by side by the four workers: each sees only its own attempts.
const lanes: ReadonlyArray<{ name: string; rule: ((inbox: Inbox) => Promise<unknown>) | undefined; outcomes: readonly string[] }> = [
  { name: 'greylisted', rule: (inbox) => inbox.smtp.greylist({ minDelay: 1_000 }), outcomes: ['deferred', 'accepted', 'accepted'] },
  { name: 'deferred twice', rule: (inbox) => inbox.smtp.defer({ times: 2 }), outcomes: ['deferred', 'deferred', 'accepted', 'accepted'] },
  { name: 'refused', rule: (inbox) => inbox.smtp.reject({ stage: 'rcpt', times: 2 }), outcomes: ['rejected', 'rejected'] },
  { name: 'without rules', rule: undefined, outcomes: ['accepted', 'accepted'] },
];
for (const lane of lanes) {
  test(`side by side, ${lane.name}: its attempts and no one else's`, async ({ request, inbox }) => {
    await lane.rule?.(inbox);
    expect((await request.post('/api/signup', { data: { email: inbox.address } })).status()).toBe(202);
    await expect.poll(async () => (await inbox.smtp.attempts()).map((a) => a.outcome), { timeout: 15_000 }).toEqual(lane.outcomes);
    expect((await inbox.smtp.attempts()).every((a) => a.to === inbox.address)).toBe(true);
  });
}
