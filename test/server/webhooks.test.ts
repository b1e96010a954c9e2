// Webhooks on the embedded server, through real sockets: mail in over SMTP
// (nodemailer), events out over HTTP to a real local receiver (node:http),
// on a compressed retry schedule. Part of the server contract suite
// (vitest.config.ts): the same tests run on the memory store (the
// dispatcher holds the queue) and on a real Redis store (the queue, the
// leases, the log and the dead letters in Redis). Every row of the classification, the cap
// exact, jitter present and only adding, Retry-After, the per-attempt
// timeout, signatures, ordering, the test controls, dead letters and
// replay, removal, and a receiver that never answers. The jitter's random
// source is injected (fixed), so each delay is checked exactly against the
// policy; gaps measured in real time are only checked as lower bounds.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/client/verify-webhook.js';
import type { MailroomServer } from '../../src/server/index.js';
import { internalsOf } from '../../src/server/start-server.js';
import { closeReceivers, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { call, freshAddress, sendMail, sharedServer, start } from './helpers.js';

/**
 * The server of every test that needs nothing of its own from it (random
 * 0.5: each jitter is exactly a quarter of its step): each registers its own
 * webhook at a fresh address, and the webhooks left over are removed after
 * each test, so one test's retries never run into the next.
 */
const shared = sharedServer({ random: () => 0.5 });

afterEach(async () => {
  await closeReceivers();
  const server = await shared();
  const listed = await call(server, '/api/v1/webhooks');
  for (const { id } of listed.json.webhooks as { id: string }[]) await call(server, `/api/v1/webhooks/${id}`, { method: 'DELETE' });
});

const FAST = { max_attempts: 5, initial_delay_ms: 50, factor: 2, max_delay_ms: 400 };

async function register(server: MailroomServer, body: Record<string, unknown>) {
  const answer = await call(server, '/api/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(answer.status, answer.text).toBe(201);
  return answer.json.webhook as { id: string; secret: string; retry: typeof FAST } & Record<string, unknown>;
}

type Attempt = {
  attempt: number;
  at: string;
  status: number | null;
  latency_ms: number;
  outcome: string;
  reason: string;
  next_delay_ms: number | null;
  copy: number;
};
type Delivery = { event_id: string; event_type: string; address: string; state: string; next_attempt_at: string | null; attempts: Attempt[] };

async function deliveries(server: MailroomServer, id: string): Promise<Delivery[]> {
  const answer = await call(server, `/api/v1/webhooks/${id}/deliveries`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json.deliveries as Delivery[];
}

/**
 * Reads the log until `done` holds: a wait for the server to get there, not a
 * timing assert. At most 30 s, a hang guard: a server's first event waits for
 * its delivery thread to load (from TypeScript source here), which on a
 * loaded machine took more than the 10 s this once allowed.
 */
async function until(server: MailroomServer, id: string, done: (d: Delivery[]) => boolean): Promise<Delivery[]> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    const seen = await deliveries(server, id);
    if (done(seen)) return seen;
    if (performance.now() > deadline) throw new Error(`the log never got there: ${JSON.stringify(seen, null, 1).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const settled =
  (n = 1) =>
  (d: Delivery[]) =>
    d.length >= n && d.every((x) => x.state !== 'pending');

async function hookAndMail(options: { server?: MailroomServer; hook?: Record<string, unknown>; receiver?: WebhookReceiver } = {}) {
  const server = options.server ?? (await shared());
  const receiver = options.receiver ?? (await startReceiver());
  const address = freshAddress('hook');
  const webhook = await register(server, { url: receiver.url, address, events: ['message.received'], retry: FAST, ...options.hook });
  return { server, receiver, address, webhook, send: (subject = 'Hello') => sendMail(server, { to: address, subject, text: `Body of ${subject}` }) };
}

describe('classification', () => {
  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
  ])('%i is delivered on the first attempt', async (status) => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.otherwise = { status };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('delivered');
    expect(delivery!.attempts).toMatchObject([{ attempt: 1, status, outcome: 'delivered', reason: String(status), next_delay_ms: null }]);
    expect(receiver.received).toHaveLength(1);
  });

  it.each([408, 429, 500, 502, 503, 504])('%i is retried, then delivered', async (status) => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.script.push({ status }, { status });
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('delivered');
    expect(delivery!.attempts.map((a) => [a.status, a.outcome, a.reason])).toEqual([
      [status, 'retrying', String(status)],
      [status, 'retrying', String(status)],
      [204, 'delivered', '204'],
    ]);
    expect(receiver.received.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(new Set(receiver.received.map((r) => r.eventId)).size).toBe(1);
  });

  it.each([
    [400, '4xx-not-retried'],
    [404, '4xx-not-retried'],
    [410, '4xx-not-retried'],
    [422, '4xx-not-retried'],
    [401, 'signature'],
    [403, 'signature'],
  ])('%i is dead-lettered at once, not retried (%s)', async (status, reason) => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.otherwise = { status };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('dead_lettered');
    expect(delivery!.attempts).toMatchObject([{ attempt: 1, status, outcome: 'failed', reason }]);
    expect(receiver.received).toHaveLength(1);
    const dead = await call(server, `/api/v1/webhooks/${webhook.id}/dead-letters`);
    expect(dead.json.dead_letters).toMatchObject([{ event_id: delivery!.event_id, reason, attempts: [{ status }] }]);
  });

  it('a reset connection is retried (reason reset)', async () => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.script.push({ reset: true });
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.attempts.map((a) => [a.status, a.reason, a.outcome])).toEqual([
      [null, 'reset', 'retrying'],
      [204, '204', 'delivered'],
    ]);
  });

  it('a refused connection is retried (reason refused): the endpoint down for the first attempts, then up', async () => {
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { retry: { ...FAST, initial_delay_ms: 100 } } });
    await receiver.down();
    await send();
    const down = await until(server, webhook.id, (d) => (d[0]?.attempts.length ?? 0) >= 2);
    expect(down[0]!.attempts.map((a) => [a.status, a.reason])).toEqual([
      [null, 'refused'],
      [null, 'refused'],
    ]);
    await receiver.up();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('delivered');
    expect(delivery!.attempts.at(-1)).toMatchObject({ status: 204, outcome: 'delivered' });
    expect(delivery!.attempts.slice(0, -1).every((a) => a.reason === 'refused')).toBe(true);
    expect(receiver.received).toHaveLength(1);
  });

  it('a slow answer past the per-attempt timeout is a timeout, and retried', async () => {
    // The first attempt is never answered, so it can only end by the timeout;
    // the retry is answered at once and has the same 1 s to get there, room
    // enough on a loaded machine (200 ms was not: a late retry timed out too).
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { timeout_ms: 1_000 } });
    // Only the first attempt hangs, whichever request reaches the receiver first.
    receiver.otherwise = (request) => (request.attempt === 1 ? { hang: true } : { status: 204 });
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.attempts.map((a) => [a.status, a.reason, a.outcome])).toEqual([
      [null, 'timeout', 'retrying'],
      [204, '204', 'delivered'],
    ]);
    expect(delivery!.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(999);
  });
});

describe('the schedule', () => {
  it('a cap of 5 is 5 attempts in all, the first one counted, then a dead letter with every attempt', async () => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.otherwise = { status: 500 };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('dead_lettered');
    expect(delivery!.attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(delivery!.attempts.map((a) => a.outcome)).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'failed']);
    expect(receiver.received).toHaveLength(5);
    // Nothing more comes: the log is final, and the receiver saw exactly the five.
    const dead = await call(server, `/api/v1/webhooks/${webhook.id}/dead-letters`);
    expect(dead.json.dead_letters).toHaveLength(1);
    expect(dead.json.dead_letters[0]).toMatchObject({ event_id: delivery!.event_id, event_type: 'message.received', reason: '500' });
    expect(dead.json.dead_letters[0].attempts).toHaveLength(5);
    expect(dead.json.dead_letters[0].payload_excerpt).toContain(delivery!.event_id);
    expect(dead.json.dead_letters[0].payload_excerpt.length).toBeLessThanOrEqual(512);
  });

  it('each delay is the capped exponential step plus the jitter drawn, never less than the step', async () => {
    // The random source returns 0.5: every delay is exactly step * 1.25.
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.otherwise = { status: 503 };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    const steps = [50, 100, 200, 400];
    expect(delivery!.attempts.slice(0, 4).map((a) => a.next_delay_ms)).toEqual(steps.map((step) => Math.round(step * 1.25)));
    // And the attempts really waited at least that long (a lower bound: real time).
    const times = delivery!.attempts.map((a) => Date.parse(a.at));
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(delivery!.attempts[i - 1]!.next_delay_ms! - 1);
  });

  it('jitter only adds, and differs between draws', async () => {
    const draws = [0, 0.999, 0.25, 0.75];
    const server = await start({ random: () => draws.shift() ?? 0 });
    const { receiver, webhook, send } = await hookAndMail({ server });
    receiver.otherwise = { status: 503 };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    const delays = delivery!.attempts.slice(0, 4).map((a) => a.next_delay_ms!);
    expect(delays).toEqual([50, Math.round(100 * 1.4995), Math.round(200 * 1.125), Math.round(400 * 1.375)]);
    [50, 100, 200, 400].forEach((step, i) => {
      expect(delays[i]).toBeGreaterThanOrEqual(step);
      expect(delays[i]).toBeLessThan(step * 1.5 + 1);
    });
  });

  it('Retry-After on a 429 is waited exactly, instead of the backoff', async () => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.script.push({ status: 429, headers: { 'retry-after': '1' } });
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.attempts.map((a) => [a.status, a.next_delay_ms])).toEqual([
      [429, 1000],
      [204, null],
    ]);
    expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('a receiver that never answers: every attempt times out, and the event is dead-lettered after the cap', async () => {
    // A receiver that hangs times out whatever the timeout: a short one keeps the test short.
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { timeout_ms: 300, retry: { ...FAST, max_attempts: 3 } } });
    receiver.otherwise = { hang: true };
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(delivery!.state).toBe('dead_lettered');
    expect(delivery!.attempts.map((a) => [a.status, a.reason, a.outcome])).toEqual([
      [null, 'timeout', 'retrying'],
      [null, 'timeout', 'retrying'],
      [null, 'timeout', 'failed'],
    ]);
    // The server's log is the count that matters; a request the timeout cut before it reached the receiver (a loaded machine) is not seen there.
    expect(receiver.received.length).toBeLessThanOrEqual(3);
  });

  it('the default schedule has the seed shape: about a minute, then five, then 25, then the 30-minute cap', async () => {
    const server = await start({ random: () => 0 });
    const receiver = await startReceiver();
    const webhook = await register(server, { url: receiver.url });
    expect(webhook.retry).toEqual({ max_attempts: 5, initial_delay_ms: 60_000, factor: 5, max_delay_ms: 1_800_000 });
    expect(webhook.timeout_ms).toBe(10_000);
    receiver.otherwise = { status: 503 };
    const address = freshAddress('default');
    await sendMail(server, { to: address, subject: 'x', text: 'x' });
    const [delivery] = await until(server, webhook.id, (d) => d[0]?.attempts.length === 1);
    expect(delivery!.attempts[0]!.next_delay_ms).toBe(60_000);
    expect(Date.parse(delivery!.next_attempt_at!) - Date.parse(delivery!.attempts[0]!.at)).toBeGreaterThanOrEqual(60_000);
  });
});

describe('signatures', () => {
  it('every attempt is signed over its timestamp and exact body; a tampered body and an old timestamp are refused', async () => {
    const { server, receiver, webhook, send, address } = await hookAndMail({ hook: { secret: 'shh-test-secret' } });
    receiver.script.push({ status: 500 });
    await send('Signed');
    await until(server, webhook.id, settled());
    expect(receiver.received).toHaveLength(2);
    for (const request of receiver.received) {
      const event = verifyWebhookSignature({ body: request.body, headers: request.headers, secret: 'shh-test-secret' });
      expect(event).toMatchObject({ type: 'message.received', address });
      expect(request.headers['mailroom-event-type']).toBe('message.received');
      expect(request.headers['mailroom-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    }
    const [first] = receiver.received;
    expect(() => verifyWebhookSignature({ body: first!.body.replace('Signed', 'Signet'), headers: first!.headers, secret: 'shh-test-secret' })).toThrow(
      expect.objectContaining({ slug: 'webhook_signature_invalid' }),
    );
    expect(() => verifyWebhookSignature({ body: first!.body, headers: first!.headers, secret: 'another-secret' })).toThrow(
      expect.objectContaining({ slug: 'webhook_signature_invalid' }),
    );
    expect(() => verifyWebhookSignature({ body: first!.body, headers: first!.headers, secret: 'shh-test-secret', now: Date.now() + 301_000 })).toThrow(
      expect.objectContaining({ slug: 'webhook_signature_stale' }),
    );
    expect(() => verifyWebhookSignature({ body: first!.body, headers: {}, secret: 'shh-test-secret' })).toThrow(
      expect.objectContaining({ slug: 'webhook_signature_missing' }),
    );
  });

  it('a registration without a secret gets one made up, returned once it is registered, and used', async () => {
    const { server, receiver, webhook, send } = await hookAndMail();
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    await send();
    await until(server, webhook.id, settled());
    expect(() => verifyWebhookSignature({ body: receiver.received[0]!.body, headers: receiver.received[0]!.headers, secret: webhook.secret })).not.toThrow();
  });
});

describe('order and the test controls', () => {
  it('an endpoint gets its events one at a time, in order: a failing one holds back the rest', async () => {
    const { server, receiver, webhook, send } = await hookAndMail();
    receiver.script.push({ status: 503 }, { status: 503 });
    for (const subject of ['one', 'two', 'three']) await send(subject);
    await until(server, webhook.id, settled(3));
    const subjects = receiver.received.map((r) => (JSON.parse(r.body) as { data: { message: { subject: string } } }).data.message.subject);
    expect(subjects).toEqual(['one', 'one', 'one', 'two', 'three']);
  });

  it('ordered: false lets later events overtake a failing one', async () => {
    // The retry of "one" is due 1.25 s after its first attempt: "two" is sent long before.
    const { server, receiver, webhook, send } = await hookAndMail({
      hook: { ordered: false, retry: { ...FAST, initial_delay_ms: 1_000, max_delay_ms: 2_000 } },
    });
    receiver.otherwise = (request) => (JSON.parse(request.body).data.message.subject === 'one' && request.attempt === 1 ? { status: 503 } : { status: 204 });
    await send('one');
    await send('two');
    await until(server, webhook.id, settled(2));
    const subjects = receiver.received.map((r) => (JSON.parse(r.body) as { data: { message: { subject: string } } }).data.message.subject);
    expect(subjects).toEqual(['one', 'two', 'one']);
  });

  it('duplicates: 3 delivers each event three times with the same id', async () => {
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { duplicates: 3 } });
    await send();
    const [delivery] = await until(server, webhook.id, settled());
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.eventId))).toEqual(new Set([delivery!.event_id]));
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    expect(delivery!.attempts.map((a) => [a.copy, a.attempt])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
  });

  it('out_of_order delivers in swapped pairs: the second event first', async () => {
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { out_of_order: true } });
    await send('first');
    await send('second');
    await until(server, webhook.id, settled(2));
    const subjects = receiver.received.map((r) => (JSON.parse(r.body) as { data: { message: { subject: string } } }).data.message.subject);
    expect(subjects).toEqual(['second', 'first']);
  });

  it('first_attempt_delay_ms holds an event before its first attempt', async () => {
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { first_attempt_delay_ms: 300 } });
    const sentAt = performance.now();
    await send();
    await until(server, webhook.id, settled());
    expect(receiver.received[0]!.at - sentAt).toBeGreaterThanOrEqual(295);
  });
});

describe('dead letters, replay and removal', () => {
  it('a dead letter is replayed with a fresh budget; attempt numbers go on counting', async () => {
    const { server, receiver, webhook, send } = await hookAndMail({ hook: { retry: { ...FAST, max_attempts: 2 } } });
    receiver.script.push({ status: 500 }, { status: 500 });
    await send();
    const [dead] = await until(server, webhook.id, settled());
    expect(dead!.state).toBe('dead_lettered');
    const replay = await call(server, `/api/v1/webhooks/${webhook.id}/dead-letters/${dead!.event_id}/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(replay.status, replay.text).toBe(202);
    const [delivery] = await until(server, webhook.id, (d) => d[0]?.state === 'delivered');
    expect(delivery!.attempts.map((a) => [a.attempt, a.status])).toEqual([
      [1, 500],
      [2, 500],
      [3, 204],
    ]);
    expect((await call(server, `/api/v1/webhooks/${webhook.id}/dead-letters`)).json.dead_letters).toEqual([]);
    const again = await call(server, `/api/v1/webhooks/${webhook.id}/dead-letters/${dead!.event_id}/replay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(again.status).toBe(404);
    expect(again.json.error).toBe('not_found');
  });

  it('removing a webhook stops its retries: no attempt after the delete', async () => {
    // Retries far enough apart that a loaded machine still removes the webhook before its retry is due.
    const { server, receiver, webhook, send, address } = await hookAndMail({ hook: { retry: { ...FAST, initial_delay_ms: 2_000, max_delay_ms: 4_000 } } });
    // A witness on the same address retries later (3 s * 1.25) than the removed one would have (2 s * 1.25).
    const witness = await startReceiver();
    await register(server, { url: witness.url, address, events: ['message.received'], retry: { ...FAST, initial_delay_ms: 3_000, max_delay_ms: 4_000 } });
    receiver.otherwise = { status: 503 };
    witness.script.push({ status: 503 });
    await send();
    await Promise.all([receiver.waitFor(1), witness.waitFor(1)]);
    const removed = await call(server, `/api/v1/webhooks/${webhook.id}`, { method: 'DELETE' });
    expect(removed.json).toEqual({ deleted: true });
    expect((await call(server, `/api/v1/webhooks/${webhook.id}`, { method: 'DELETE' })).json).toEqual({ deleted: false });
    expect((await call(server, `/api/v1/webhooks/${webhook.id}/deliveries`)).status).toBe(404);
    await witness.waitFor(2);
    expect(receiver.received).toHaveLength(1);
  });

  it('deleting the mailbox removes the webhooks scoped to it, and only those', async () => {
    const server = await shared();
    const receiver = await startReceiver();
    const address = freshAddress('scoped');
    const scoped = await register(server, { url: receiver.url, address });
    const other = await register(server, { url: receiver.url, address: freshAddress('other') });
    const global = await register(server, { url: receiver.url });
    await call(server, `/api/v1/mailbox?address=${encodeURIComponent(address)}`, { method: 'DELETE' });
    expect((await call(server, `/api/v1/webhooks/${scoped.id}`)).status).toBe(404);
    expect((await call(server, `/api/v1/webhooks/${other.id}`)).status).toBe(200);
    expect((await call(server, `/api/v1/webhooks/${global.id}`)).status).toBe(200);
  });
});

describe('the events', () => {
  it('message.received carries the message as the API shows it, and a link to its raw source', async () => {
    const { server, receiver, webhook, send, address } = await hookAndMail();
    await send('Parsed for you');
    await until(server, webhook.id, settled());
    const event = JSON.parse(receiver.received[0]!.body);
    expect(event).toMatchObject({
      type: 'message.received',
      address,
      data: { message: { subject: 'Parsed for you', text: expect.stringContaining('Body of Parsed for you') } },
    });
    expect(event.id).toMatch(/^evt_[0-9a-f]{32}$/);
    const listed = await call(server, `/api/v1/mailbox?address=${encodeURIComponent(address)}`);
    const message = await call(server, `/api/v1/message/${listed.json.messages[0].id}?mailbox=${encodeURIComponent(address)}`);
    expect(event.data.message).toEqual(message.json);
    const raw = await call(server, new URL(event.data.raw_url).pathname + new URL(event.data.raw_url).search);
    expect(raw.status).toBe(200);
    expect(raw.text).toContain('Subject: Parsed for you');
  });

  // What this sees is the memory store's copy left unsummarised (the store
  // summarises a message when it is first listed, so a parse for the event
  // through the store would leave one); which thread built the event is the
  // delivery thread's design (threaded-sender.ts), not observed here.
  it("leaves the stored message unsummarised: the event's message view is not built through the server's store", async () => {
    const { server, receiver, webhook, send, address } = await hookAndMail();
    await send('Parsed elsewhere');
    await until(server, webhook.id, settled());
    expect(JSON.parse(receiver.received[0]!.body).data.message.subject).toBe('Parsed elsewhere');
    // The memory store summarises a message only when it is first listed; the Redis store summarises every mail at intake, by design.
    const [stored] = await internalsOf(server).store.list(address, 1);
    if (inject('redisURL') === undefined) expect(stored!.content.summaryIfKnown).toBeUndefined();
  });

  it('delivery.deferred and delivery.rejected come from the SMTP replies at the address (the deferral lab)', async () => {
    const server = await shared();
    const receiver = await startReceiver();
    const address = freshAddress('outcomes');
    const webhook = await register(server, { url: receiver.url, address, events: ['delivery.deferred', 'delivery.rejected'] });
    const rule = (body: unknown) =>
      call(server, `/api/v1/mailbox/rules?address=${encodeURIComponent(address)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    await rule({ kind: 'defer', code: 451, stage: 'rcpt' });
    await rule({ kind: 'reject', code: 550, stage: 'data' });
    await expect(sendMail(server, { to: address, subject: 'first', text: 'x' })).rejects.toThrow(/451/);
    await expect(sendMail(server, { to: address, subject: 'second', text: 'x' })).rejects.toThrow(/550/);
    await sendMail(server, { to: address, subject: 'third', text: 'x' }); // accepted: not an event this webhook wants
    await until(server, webhook.id, settled(2));
    const events = receiver.received.map((r) => JSON.parse(r.body));
    expect(events.map((e) => e.type)).toEqual(['delivery.deferred', 'delivery.rejected']);
    expect(events[0].data).toMatchObject({ to: address, stage: 'rcpt', code: 451, enhanced_code: '4.3.0', outcome: 'deferred', rule: 'defer' });
    expect(events[1].data).toMatchObject({
      to: address,
      stage: 'data',
      code: 550,
      enhanced_code: '5.1.1',
      outcome: 'rejected',
      rule: 'reject',
      subject: 'second',
    });
  });

  it('a webhook scoped to one address hears nothing of another; an unscoped one hears every address', async () => {
    const server = await start();
    const receiver = await startReceiver();
    const everywhere = await startReceiver();
    const mine = freshAddress('mine');
    const scoped = await register(server, { url: receiver.url, address: mine });
    const global = await register(server, { url: everywhere.url, events: ['message.received'] });
    await sendMail(server, { to: freshAddress('theirs'), subject: 'not yours', text: 'x' });
    await sendMail(server, { to: mine, subject: 'yours', text: 'x' });
    await until(server, global.id, settled(2));
    await until(server, scoped.id, settled(1));
    expect(receiver.received.map((r) => JSON.parse(r.body).data.message.subject)).toEqual(['yours']);
    expect(everywhere.received.map((r) => JSON.parse(r.body).data.message.subject)).toEqual(['not yours', 'yours']);
    // The log of the unscoped one, for one address (the web UI's tab): only that mailbox's events, the address checked like any.
    const only = await call(server, `/api/v1/webhooks/${global.id}/deliveries?address=${encodeURIComponent(mine.toUpperCase())}`);
    expect(only.status, only.text).toBe(200);
    expect((only.json.deliveries as Delivery[]).map((d) => d.address)).toEqual([mine]);
    expect((await call(server, `/api/v1/webhooks/${global.id}/deliveries?address=nope`)).json.error).toBe('invalid_address');
  });
});

describe('the API', () => {
  it('advertises webhooks and metrics in /healthz, and serves neither when off', async () => {
    const on = await start();
    expect((await call(on, '/healthz')).json.features).toMatchObject({ webhooks: '/api/v1/webhooks', metrics: '/metrics' });
    const off = await start({ webhooks: false });
    const health = (await call(off, '/healthz')).json.features;
    expect(health.webhooks).toBeUndefined();
    expect(health.metrics).toBeUndefined();
    expect((await call(off, '/api/v1/webhooks')).status).toBe(404);
    expect((await call(off, '/metrics')).status).toBe(404);
  });

  it('lists, reads and fills in a registration', async () => {
    const server = await start();
    const address = freshAddress('listed');
    const webhook = await register(server, { url: 'http://127.0.0.1:9/x', address: address.toUpperCase(), events: ['delivery.rejected', 'message.received'] });
    expect(webhook).toMatchObject({
      url: 'http://127.0.0.1:9/x',
      address: address.toLowerCase(),
      events: ['message.received', 'delivery.rejected'],
      ordered: true,
      duplicates: 1,
      out_of_order: false,
      first_attempt_delay_ms: 0,
    });
    expect((await call(server, `/api/v1/webhooks/${webhook.id}`)).json.webhook).toEqual(webhook);
    expect((await call(server, '/api/v1/webhooks')).json.webhooks).toEqual([webhook]);
    expect((await call(server, `/api/v1/webhooks?address=${encodeURIComponent(address)}`)).json.webhooks).toEqual([webhook]);
    expect((await call(server, `/api/v1/webhooks?address=${encodeURIComponent(freshAddress())}`)).json.webhooks).toEqual([]);
  });

  it.each([
    [{}, 'Expected `url` to be an http(s) URL'],
    [{ url: 'ftp://x/y' }, 'Expected `url` to be an http(s) URL'],
    [{ url: 'http://127.0.0.1/', events: ['message.recieved'] }, 'Unknown event type "message.recieved" in `events`'],
    [{ url: 'http://127.0.0.1/', retry: { max_attempts: 0 } }, 'Expected `retry.max_attempts` to be a whole number from 1 to 100, got 0'],
    [
      { url: 'http://127.0.0.1/', retry: { initial_delay_ms: 500, max_delay_ms: 100 } },
      'Expected `retry.max_delay_ms` (100) to be at least `retry.initial_delay_ms` (500)',
    ],
    [{ url: 'http://127.0.0.1/', retry: { factor: 0.5 } }, 'Expected `retry.factor` to be a number from 1 to 100, got 0.5'],
    [{ url: 'http://127.0.0.1/', retry: { maxAttempts: 3 } }, 'Unknown field `retry.maxAttempts`'],
    [{ url: 'http://127.0.0.1/', duplicates: 11 }, 'Expected `duplicates` to be a whole number from 1 to 10, got 11'],
    [{ url: 'http://127.0.0.1/', timeout_ms: 0 }, 'Expected `timeout_ms` to be a whole number of milliseconds from 1 to 600000, got 0'],
    [{ url: 'http://127.0.0.1/', secret: 'has space' }, 'Expected `secret` to be 1 to 256 characters of printable ASCII'],
    [{ url: 'http://127.0.0.1/', urll: 'x' }, 'Unknown field `urll`'],
  ])('refuses %j with invalid_request naming the field', async (body, message) => {
    const server = await start();
    const answer = await call(server, '/api/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
    expect(answer.json.message).toContain(message);
  });

  it('refuses an address it cannot serve (catchAll off), a body that is not JSON, and malformed ids', async () => {
    const server = await start({ catchAll: false });
    const post = (body: string) => call(server, '/api/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect((await post(JSON.stringify({ url: 'http://127.0.0.1/', address: 'a@elsewhere.example' }))).json.error).toBe('unknown_domain');
    expect((await post(JSON.stringify({ url: 'http://127.0.0.1/', address: 'not an address' }))).json.error).toBe('invalid_address');
    expect((await post('{nope')).json).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('JSON webhook registration') });
    expect((await call(server, '/api/v1/webhooks/nope')).json.error).toBe('invalid_request');
    expect((await call(server, `/api/v1/webhooks/wh_${'0'.repeat(24)}`)).json.error).toBe('not_found');
    expect((await call(server, `/api/v1/webhooks/wh_${'0'.repeat(24)}/dead-letters/evt_x/replay`, { method: 'POST' })).json.error).toBe('invalid_request');
    expect((await call(server, '/api/v1/webhooks', { method: 'PUT' })).status).toBe(405);
  });

  it('needs the token like the rest of the API, /metrics included', async () => {
    const server = await start({ token: 'sekrit' });
    expect((await call(server, '/api/v1/webhooks')).status).toBe(401);
    expect((await call(server, '/metrics')).status).toBe(401);
    expect((await call(server, '/metrics', { headers: { authorization: 'Bearer sekrit' } })).status).toBe(200);
  });

  it('/metrics counts attempts, failures by reason, eventual successes and latency in Prometheus text', async () => {
    // A server of its own: the counts are the whole server's.
    const { server, receiver, webhook, send } = await hookAndMail({ server: await start({ random: () => 0.5 }) });
    // One: a 503, then delivered (an eventual success); two: a 404, dead at once.
    receiver.script.push({ status: 503 }, { status: 204 }, { status: 404 });
    await send('one');
    await send('two');
    await until(server, webhook.id, settled(2));
    const metrics = await call(server, '/metrics');
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    expect(metrics.text).toContain('mailroom_webhook_attempts_total{event_type="message.received"} 3');
    expect(metrics.text).toContain('mailroom_webhook_failures_total{reason="503"} 1');
    expect(metrics.text).toContain('mailroom_webhook_failures_total{reason="4xx-not-retried"} 1');
    expect(metrics.text).toContain('mailroom_webhook_deliveries_total{result="delivered"} 1');
    expect(metrics.text).toContain('mailroom_webhook_deliveries_total{result="dead_lettered"} 1');
    expect(metrics.text).toContain('mailroom_webhook_eventual_successes_total 1');
    expect(metrics.text).toContain('mailroom_webhook_attempt_duration_seconds_count 3');
    expect(metrics.text).toContain('mailroom_webhook_pending 0');
  });

  it('static webhooks (mailroom serve --webhook) are registered at start for every address', async () => {
    const receiver = await startReceiver();
    const server = await start({ staticWebhooks: [{ url: receiver.url, secret: 'static-secret' }] });
    const [webhook] = (await call(server, '/api/v1/webhooks')).json.webhooks;
    expect(webhook).toMatchObject({ url: receiver.url, address: null, secret: 'static-secret' });
    await sendMail(server, { to: freshAddress('static'), subject: 'x', text: 'x' });
    await receiver.waitFor(1);
    expect(verifyWebhookSignature({ body: receiver.received[0]!.body, headers: receiver.received[0]!.headers, secret: 'static-secret' }).type).toBe(
      'message.received',
    );
    await expect(start({ staticWebhooks: [{ url: 'nope' }] })).rejects.toThrow('Invalid static webhook "nope": Expected `url` to be an http(s) URL');
  });
});
