// inbox.webhooks and the webhook matchers against the embedded server and a
// real local receiver: registration through the inbox (options checked with
// their own names), the matchers' verdicts and words, the attempt timeline,
// dead letters and replay, and removal at a test's teardown. Real time on a
// compressed schedule; nothing asserts how long anything took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInbox, MailroomError } from '../../src/index.js';
import { matchDeadLettered, matchDelivered } from '../../src/runner/webhook-matchers.js';
import { formatWebhookTimeline } from '../../src/runner/webhook-timeline.js';
import { openTestInbox, type ReportAttachment, type TestRunnerBridge } from '../../src/runner/index.js';
import type { MailroomServer } from '../../src/server/index.js';
import { send, startTestServer } from '../support/server.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer({ random: () => 0.5 });
});
// Not after each test: the tests run side by side, each with its own receivers.
afterAll(async () => {
  await Promise.all([server?.close(), closeReceivers()]);
});

const FAST = { maxAttempts: 4, initialDelayMs: 60, factor: 2, maxDelayMs: 500 };
// 20 s: the matchers' budget, only ever spent when a test fails. 8 s ran out
// under load (stress-ng beside a loaded machine) before a first attempt was
// made: each server's delivery thread loads from TypeScript source first.
const inboxFor = (prefix: string) => createInbox({ apiURL: server.apiURL, domain: server.domains[0], prefix, timeout: 20_000 });

describe.concurrent('inbox.webhooks', () => {
  it('registers a webhook scoped to the inbox, with the options in its own words', async () => {
    const inbox = await inboxFor('register');
    const receiver = await startReceiver();
    const hook = await inbox.webhooks.add({ url: receiver.url, events: ['message.received'], retry: FAST, duplicates: 2, timeoutMs: 1_000, secret: 'abc' });
    expect(hook.address).toBe(inbox.address);
    expect(hook.secret).toBe('abc');
    expect(hook.registration).toMatchObject({
      url: receiver.url,
      address: inbox.address,
      events: ['message.received'],
      retry: FAST,
      timeoutMs: 1_000,
      duplicates: 2,
      ordered: true,
      outOfOrder: false,
      firstAttemptDelayMs: 0,
    });
    expect(inbox.webhooks.list()).toEqual([hook]);
    expect(await hook.remove()).toBe(true);
    expect(await hook.remove()).toBe(false);
    expect(inbox.webhooks.list()).toEqual([]);
  });

  it.each([
    [{ url: 'localhost:3000' }, 'Expected `url` to be an http(s) URL'],
    [{ url: 'http://127.0.0.1/', retry: { maxAttempts: 0 } }, 'Expected `retry.maxAttempts` to be a whole number from 1 to 100, got 0'],
    [
      { url: 'http://127.0.0.1/', retry: { initialDelay: 5 } },
      'Unknown webhook option `retry.initialDelay`; expected one of retry.maxAttempts, retry.initialDelayMs',
    ],
    [{ url: 'http://127.0.0.1/', events: ['message.recieved'] }, 'Unknown event type "message.recieved" in `events`'],
    [{ url: 'http://127.0.0.1/', timeout: 5 }, 'Unknown webhook option `timeout`'],
    [{ url: 'http://127.0.0.1/', duplicates: 0 }, 'Expected `duplicates` to be a whole number from 1 to 10, got 0'],
  ])('refuses %j before asking the server', async (options, message) => {
    const inbox = await inboxFor('refuse');
    await expect(inbox.webhooks.add(options as never)).rejects.toThrow(message);
    expect(inbox.webhooks.used).toBe(false);
  });

  it('toHaveDelivered passes once the endpoint is up again, in exactly the attempts it took', async () => {
    const inbox = await inboxFor('down-then-up');
    const receiver = await startReceiver();
    // Retries 500 ms and then 2 s after the first two attempts; the endpoint
    // comes up once the log shows the second refusal (the watch reads it every
    // 250 ms). On a loaded machine that may be after the third attempt: how
    // many it took is read from the log, and the matcher must agree with it.
    const hook = await inbox.webhooks.add({
      url: receiver.url,
      events: ['message.received'],
      retry: { ...FAST, initialDelayMs: 400, factor: 4, maxDelayMs: 2_000 },
    });
    await receiver.down();
    await send(server, inbox.address, { subject: 'Ticket #1' });
    const refusedTwice = await hook.watch((d) => ((d[0]?.attempts.length ?? 0) >= 2 ? true : undefined), { within: 30_000 });
    expect(refusedTwice.settled).toBe(true);
    await receiver.up();
    const delivered = await hook.watch((d) => (d[0]?.state === 'delivered' ? true : undefined), { within: 30_000 });
    expect(delivered.settled).toBe(true);
    const [delivery] = await hook.deliveries();
    const took = delivery!.attempts.length;
    expect(took).toBeGreaterThanOrEqual(3);
    expect(delivery!.attempts.map((a) => a.reason)).toEqual([...Array.from({ length: took - 1 }, () => 'refused'), '204']);
    const passed = await matchDelivered(hook, 'message.received', { attempts: took });
    expect(passed.pass, passed.message()).toBe(true);
    // The gaps grow: the backoff's steps, each with its jitter (0.5: a quarter more).
    expect(delivery!.attempts.map((a) => a.nextDelayMs).slice(0, 2)).toEqual([500, 2000]);
    expect(delivery!.attempts.at(-1)!.nextDelayMs).toBeNull();
    const wrong = await matchDelivered(hook, 'message.received', { attempts: 1, within: 0 });
    expect(wrong.pass).toBe(false);
    expect(wrong.message()).toContain(
      `Expected webhook ${hook.id} at ${inbox.address} to have delivered message.received in exactly 1 attempt, but event 1 (message.received) delivered after ${took} attempts`,
    );
    expect(wrong.message()).toMatch(/\+0\.000 s {2}event 1 message\.received +try 1 +refused/);
    expect(wrong.message()).toMatch(new RegExp(`try ${took} +204 .* delivered`));
    expect(wrong.message()).toContain('Expected: delivered message.received in exactly 1 attempt');
  });

  it('toHaveDeadLettered: a 400 is given up on at once, for 4xx-not-retried; replay delivers it', async () => {
    const inbox = await inboxFor('bad-request');
    const receiver = await startReceiver();
    receiver.script.push({ status: 400 });
    const hook = await inbox.webhooks.add({ url: receiver.url, retry: FAST });
    await send(server, inbox.address, { subject: 'Rejected by the handler' });
    const dead = await matchDeadLettered(hook, { reason: '4xx-not-retried', attempts: 1, type: 'message.received' });
    expect(dead.pass, dead.message()).toBe(true);
    const [letter] = await hook.deadLetters();
    expect(letter).toMatchObject({ eventType: 'message.received', reason: '4xx-not-retried', attempts: [{ status: 400, outcome: 'failed' }] });
    expect(letter!.payloadExcerpt).toContain(letter!.eventId);
    const replayed = await hook.replay(letter!.eventId);
    expect(replayed.state).toBe('pending');
    const delivered = await matchDelivered(hook, 'message.received', { attempts: 2 });
    expect(delivered.pass, delivered.message()).toBe(true);
    expect(await hook.deadLetters()).toEqual([]);
  });

  it('.not.toHaveDelivered holds while the endpoint keeps failing, and its failure text says what was delivered', async () => {
    const inbox = await inboxFor('never');
    const receiver = await startReceiver();
    receiver.otherwise = { status: 503 };
    const hook = await inbox.webhooks.add({ url: receiver.url, retry: { ...FAST, maxAttempts: 2 } });
    await send(server, inbox.address);
    const dead = await matchDeadLettered(hook, { reason: '503', attempts: 2 });
    expect(dead.pass).toBe(true);
    const notYet = await matchDelivered(hook, undefined, { within: 300 }, { isNot: true });
    expect(notYet.pass).toBe(false);
    expect(notYet.message()).toContain('dead-lettered after 2 attempts (503)');
    const missing = await matchDeadLettered(hook, { reason: 'timeout', within: 0 });
    expect(missing.pass).toBe(false);
    expect(missing.message()).toContain('to have dead-lettered an event for timeout, but event 1 (message.received) dead-lettered after 2 attempts (503)');
    expect(missing.message()).toContain('→ dead letter');
  });

  it('the matchers refuse anything but a Webhook, and unknown options', async () => {
    await expect(matchDelivered({ id: 'wh_x' })).rejects.toThrow('toHaveDelivered expects a Webhook (what `inbox.webhooks.add()` returns), got an object');
    const inbox = await inboxFor('refuse-matcher');
    const hook = await inbox.webhooks.add({ url: 'http://127.0.0.1:9/x' });
    await expect(matchDelivered(hook, 'message.recieved' as never)).rejects.toThrow(
      'Expected `type` to be one of message.received, delivery.deferred, delivery.rejected',
    );
    await expect(matchDeadLettered(hook, { tries: 3 } as never)).rejects.toThrow(
      'Unknown toHaveDeadLettered option `tries`; expected one of type, reason, attempts, within, signal',
    );
    await hook.remove();
  });
});

describe('the timeline', () => {
  it('prints each attempt with its time, event, try, answer, latency, outcome and next wait', () => {
    const at = (ms: number) => new Date(Date.UTC(2030, 0, 1, 9, 0, 0) + ms);
    const text = formatWebhookTimeline({ id: 'wh_1', url: 'http://127.0.0.1:3000/hook' }, [
      {
        eventId: 'evt_a',
        eventType: 'message.received',
        address: 'a@mailroom.test',
        createdAt: at(0),
        state: 'delivered',
        nextAttemptAt: null,
        attempts: [
          { attempt: 1, at: at(0), status: 503, latencyMs: 4, outcome: 'retrying', reason: '503', nextDelayMs: 250, copy: 1 },
          { attempt: 2, at: at(262), status: null, latencyMs: 1, outcome: 'retrying', reason: 'refused', nextDelayMs: 500, copy: 1 },
          { attempt: 3, at: at(771), status: 204, latencyMs: 3, outcome: 'delivered', reason: '204', nextDelayMs: null, copy: 1 },
        ],
      },
      { eventId: 'evt_b', eventType: 'delivery.rejected', address: 'a@mailroom.test', createdAt: at(900), state: 'pending', nextAttemptAt: null, attempts: [] },
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(
      /^Webhook wh_1 → http:\/\/127\.0\.0\.1:3000\/hook: 2 events, 3 attempts, times from the first \(\d\d:\d\d:00\.000 UTC\); 1 event queued, not yet attempted:$/,
    );
    expect(lines[1]).toBe('   +0.000 s  event 1 message.received    try 1   503                      4 ms  retrying   next in 250 ms');
    expect(lines[2]).toBe('   +0.262 s  event 1 message.received    try 2   refused                  1 ms  retrying   next in 500 ms');
    expect(lines[3]).toBe('   +0.771 s  event 1 message.received    try 3   204                      3 ms  delivered');
    expect(lines[4]).toBe('  event 1 evt_a delivered; event 2 evt_b pending');
  });
});

describe('teardown', () => {
  it('attaches each webhook timeline and removes the webhooks, even when the mailbox is kept', async () => {
    const attachments: ReportAttachment[] = [];
    const bridge: TestRunnerBridge = {
      title: 'hooked',
      titlePath: 'webhook-matchers > hooked',
      step: (_title, run) => run(),
      attach: (attachment) => void attachments.push(attachment),
      annotate: () => {},
      timeLeft: () => undefined,
    };
    const receiver = await startReceiver();
    const { inbox, close } = await openTestInbox({ apiURL: server.apiURL, domain: server.domains[0], keepOnFailure: true }, bridge);
    const hook = await inbox.webhooks.add({ url: receiver.url, retry: FAST });
    await send(server, inbox.address);
    expect((await matchDelivered(hook)).pass).toBe(true);
    await close({ failed: true });
    const attached = attachments.find((a) => a.name === `webhook ${hook.id} deliveries.txt`);
    expect(String(attached?.body)).toMatch(/event 1 message\.received +try 1 +204 .* delivered/);
    await expect(hook.deliveries()).rejects.toThrow(MailroomError);
    await expect(hook.deliveries()).rejects.toMatchObject({ slug: 'not_found' });
    // The kept mailbox still has its mail: only the webhook went.
    expect((await inbox.messages()).length).toBe(1);
  });
});
