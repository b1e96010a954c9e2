// Webhooks through mailroomjs/vitest: `inbox.webhooks` on the fixture's inbox
// and the two webhook matchers on Vitest's `expect`, against the global
// setup's server and a real receiver in this worker; the webhook is gone
// after the test that registered it.
import { stripVTControlCharacters } from 'node:util';
import { request } from 'undici';
import { afterAll, describe, expectTypeOf } from 'vitest';
import { test, type Webhook, type WebhookMatchersExpectAWebhook } from '../../src/vitest/index.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';
import { apiURL, send } from './support/env.js';

afterAll(closeReceivers);
const FAST = { maxAttempts: 4, initialDelayMs: 100, factor: 2, maxDelayMs: 1_000 };

describe('webhooks in Vitest', () => {
  let registered: Webhook | undefined;

  test('an endpoint that fails twice gets the event on the third attempt', async ({ inbox, expect }) => {
    const receiver = await startReceiver();
    receiver.script.push({ status: 503 }, { status: 502 });
    const hook = await inbox.webhooks.add({ url: receiver.url, events: ['message.received'], retry: FAST });
    registered = hook;
    await send(inbox.address, { subject: 'Ticket from Vitest' });
    await expect(hook).toHaveDelivered('message.received', { attempts: 3 });
    await expect(hook).not.toHaveDeadLettered({ within: 300 });
    expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(1);
  });

  test('...and is removed at that test teardown', async ({ expect }) => {
    expect(registered).toBeDefined();
    const answer = await request(`${apiURL()}/api/v1/webhooks/${registered!.id}`);
    expect(answer.statusCode).toBe(404);
    await answer.body.dump();
  });

  test('a 400 is dead-lettered at once, and the failure text of the wrong expectation prints the timeline', async ({ inbox, expect }) => {
    const receiver = await startReceiver();
    receiver.otherwise = { status: 400 };
    const hook = await inbox.webhooks.add({ url: receiver.url, retry: FAST });
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
  });

  test('the webhook matchers refuse anything but a Webhook, at compile time and at run time', async ({ inbox, expect }) => {
    expectTypeOf(expect(42).toHaveDelivered).thisParameter.toEqualTypeOf<WebhookMatchersExpectAWebhook>();
    expectTypeOf(expect(inbox).toHaveDeadLettered).thisParameter.toEqualTypeOf<WebhookMatchersExpectAWebhook>();
    expectTypeOf(expect(null as unknown as Webhook).toHaveDelivered).thisParameter.toEqualTypeOf<unknown>();
    // @ts-expect-error only typed for a Webhook receiver
    await expect(expect(inbox).toHaveDelivered()).rejects.toThrow('toHaveDelivered expects a Webhook (what `inbox.webhooks.add()` returns), got an Inbox');
  });
});
