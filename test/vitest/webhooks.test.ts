// Webhooks through mailroomjs/vitest: `inbox.webhooks` on the fixture's inbox
// and the two webhook matchers on Vitest's `expect`, against the global
// setup's server and a real receiver in this worker; each webhook is gone
// after the test that registered it (checked after the file's tests).
import { stripVTControlCharacters } from 'node:util';
import { request } from 'undici';
import { afterAll, describe, expect, expectTypeOf } from 'vitest';
import { test, type Webhook, type WebhookMatchersExpectAWebhook } from '../../src/vitest/index.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';
import { apiURL, send } from './support/env.js';

const FAST = { maxAttempts: 4, initialDelayMs: 100, factor: 2, maxDelayMs: 1_000 };
/** Every webhook a test here registered: each must be gone once its test is over. */
const registered: Webhook[] = [];

afterAll(async () => {
  await closeReceivers();
  // After every test's teardown (the fixture's), not in a later test: no test
  // here depends on another having run first.
  for (const hook of registered) {
    const answer = await request(`${apiURL()}/api/v1/webhooks/${hook.id}`);
    await answer.body.dump();
    expect(answer.statusCode, `webhook ${hook.id} (${hook.url}) after its test's teardown`).toBe(404);
  }
});

describe('webhooks in Vitest', () => {
  test('an endpoint that fails twice gets the event on the third attempt; the webhook is removed at the test teardown', async ({ inbox, expect }) => {
    const receiver = await startReceiver();
    receiver.script.push({ status: 503 }, { status: 502 });
    const hook = await inbox.webhooks.add({ url: receiver.url, events: ['message.received'], retry: FAST });
    registered.push(hook);
    await send(inbox.address, { subject: 'Ticket from Vitest' });
    await expect(hook).toHaveDelivered('message.received', { attempts: 3 });
    expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(1);
  });

  test('a 400 is dead-lettered at once, and the failure text of the wrong expectation prints the timeline', async ({ inbox, expect }) => {
    const receiver = await startReceiver();
    receiver.otherwise = { status: 400 };
    const hook = await inbox.webhooks.add({ url: receiver.url, retry: FAST });
    registered.push(hook);
    await send(inbox.address);
    await expect(hook).toHaveDeadLettered({ reason: '4xx-not-retried', attempts: 1 });
    const failure = await expect(hook)
      .toHaveDelivered('message.received', { within: 0 })
      .then(
        () => 'passed',
        (error: Error) => stripVTControlCharacters(error.message),
      );
    expect(failure).toContain('expect(webhook).toHaveDelivered(type)');
    expect(failure).toMatch(/try 1 +400 4xx-not-retried .* failed +→ dead letter/);
    // The negation fails on the dead letter that is there.
    const negated = await expect(hook)
      .not.toHaveDeadLettered({ within: 0 })
      .then(
        () => 'passed',
        (error: Error) => stripVTControlCharacters(error.message),
      );
    expect(negated).not.toBe('passed');
    expect(negated).toMatch(/4xx-not-retried/);
  });

  test('the webhook matchers refuse anything but a Webhook, at compile time and at run time', async ({ inbox, expect }) => {
    expectTypeOf(expect(42).toHaveDelivered).thisParameter.toEqualTypeOf<WebhookMatchersExpectAWebhook>();
    expectTypeOf(expect(inbox).toHaveDeadLettered).thisParameter.toEqualTypeOf<WebhookMatchersExpectAWebhook>();
    expectTypeOf(expect(null as unknown as Webhook).toHaveDelivered).thisParameter.toEqualTypeOf<unknown>();
    // @ts-expect-error only typed for a Webhook receiver
    await expect(expect(inbox).toHaveDelivered()).rejects.toThrow('toHaveDelivered expects a Webhook (what `inbox.webhooks.add()` returns), got an Inbox');
  });
});
