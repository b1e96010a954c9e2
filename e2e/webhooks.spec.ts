// Webhooks through real Chromium: the embedded server posts inbound mail to
// the Acme demo app's support desk (fixtures/demo-app/support-desk.ts), which
// verifies each signature and records a ticket once per event id, and the
// support page shows what it recorded. Each test's webhook is scoped to its
// own address and removed at teardown, and the desk's test control fails
// only that address's events, so the workers run these side by side.
import { stripVTControlCharacters } from 'node:util';
import { test, expect } from 'mailroomjs/playwright';
import { DEMO_WEBHOOK_SECRET } from '../fixtures/demo-app/support-desk.js';
import { APP_URL } from './servers.js';
import { customerWrites } from './support/customer-mail.js';

const HANDLER = `${APP_URL}/webhooks/mail`;
const FAST = { maxAttempts: 5, initialDelayMs: 200, factor: 2, maxDelayMs: 2_000 };

test('the handler is down for the first two attempts, then up: the ticket lands once, and the gaps grow', async ({ page, inbox, request }) => {
  await request.post('/api/support/fail-next', { data: { address: inbox.address, times: 2, status: 503 } });
  const hook = await inbox.webhooks.add({ url: HANDLER, secret: DEMO_WEBHOOK_SECRET, events: ['message.received'], retry: FAST });

  await customerWrites(inbox.address, 'My order never came');
  await expect(hook).toHaveDelivered('message.received', { attempts: 3 });

  const [delivery] = await hook.deliveries();
  expect(delivery!.attempts.map((a) => [a.status, a.outcome])).toEqual([
    [503, 'retrying'],
    [503, 'retrying'],
    [200, 'delivered'],
  ]);
  // 200 ms then 400 ms, each plus at most half again: the second wait is always the longer.
  const [first, second] = delivery!.attempts.map((a) => a.nextDelayMs!);
  expect(first).toBeGreaterThanOrEqual(200);
  expect(second).toBeGreaterThan(first!);
  expect(delivery!.attempts[2]!.at.getTime() - delivery!.attempts[1]!.at.getTime()).toBeGreaterThanOrEqual(second! - 1);

  await page.goto(`/support?address=${encodeURIComponent(inbox.address)}`);
  await expect(page.getByRole('row', { name: /My order never came/ })).toContainText('once');
  await expect(page.getByRole('status')).toHaveText('1 ticket');
});

test('the same event three times is one ticket', async ({ page, inbox }) => {
  const hook = await inbox.webhooks.add({ url: HANDLER, secret: DEMO_WEBHOOK_SECRET, events: ['message.received'], retry: FAST, duplicates: 3 });
  await customerWrites(inbox.address, 'Please cancel my subscription');
  await expect(hook).toHaveDelivered('message.received', { attempts: 3 });
  const [delivery] = await hook.deliveries();
  expect(delivery!.attempts.map((a) => a.copy)).toEqual([1, 2, 3]);

  await page.goto(`/support?address=${encodeURIComponent(inbox.address)}`);
  await expect(page.getByRole('row', { name: /Please cancel my subscription/ })).toContainText('3 times');
  await expect(page.getByRole('status')).toHaveText('1 ticket');
});

test('a bad signature is refused and dead-lettered without retries', async ({ page, inbox }) => {
  const hook = await inbox.webhooks.add({ url: HANDLER, secret: 'not-the-app-secret', events: ['message.received'], retry: FAST });
  await customerWrites(inbox.address, 'Forged or not?');
  await expect(hook).toHaveDeadLettered({ reason: 'signature', attempts: 1 });
  const [letter] = await hook.deadLetters();
  expect(letter!.attempts[0]!.status).toBe(401);
  expect(letter!.payloadExcerpt).toContain('Forged or not?');

  await page.goto(`/support?address=${encodeURIComponent(inbox.address)}`);
  await expect(page.getByRole('status')).toHaveText('0 tickets; 1 request refused for a bad signature');
  await expect(page.getByRole('cell', { name: 'No tickets yet.' })).toBeVisible();
});

test('a handler answering 400 is dead-lettered at once; a replay delivers it', async ({ page, inbox, request }) => {
  await request.post('/api/support/fail-next', { data: { address: inbox.address, times: 1, status: 400 } });
  const hook = await inbox.webhooks.add({ url: HANDLER, secret: DEMO_WEBHOOK_SECRET, events: ['message.received'], retry: FAST });
  await customerWrites(inbox.address, 'Where is my invoice?');
  await expect(hook).toHaveDeadLettered({ reason: '4xx-not-retried', attempts: 1 });

  await page.goto(`/support?address=${encodeURIComponent(inbox.address)}`);
  await expect(page.getByRole('status')).toHaveText('0 tickets');
  // The matcher's failure names what happened and prints the attempt timeline, as in Vitest.
  const failure = await expect(hook)
    .toHaveDelivered('message.received', { within: 0 })
    .then(
      () => 'passed',
      (error: Error) => stripVTControlCharacters(error.message),
    );
  expect(failure).toContain(
    `Expected webhook ${hook.id} at ${inbox.address} to have delivered message.received, but event 1 (message.received) dead-lettered after 1 attempt (4xx-not-retried)`,
  );
  expect(failure).toMatch(/try 1 +400 4xx-not-retried .* failed +→ dead letter/);

  // The handler is fixed; the operator replays the dead letter.
  const [letter] = await hook.deadLetters();
  await hook.replay(letter!.eventId);
  await expect(hook).toHaveDelivered('message.received', { attempts: 2 });
  await expect(page.getByRole('row', { name: /Where is my invoice\?/ })).toContainText('once');
  await expect(page.getByRole('status')).toHaveText('1 ticket');
});
