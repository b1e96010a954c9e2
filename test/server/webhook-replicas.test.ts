// Webhooks across several `mailroom serve` processes on one Redis: a
// registration made through one is every replica's, each attempt of an
// event is made by exactly one replica (counted at a real receiver by event
// id and attempt number), a replica killed (SIGKILL) while its attempt is
// in flight leaves the remaining attempts to another with the cap still
// exact, a restarted replica finds everything where it was and replays a
// dead letter, `duplicates` is never exceeded, and a Redis outage loses no
// event. Real processes (the built CLI), a real redis-server, real sockets;
// every wait is bounded and nothing is asserted from elapsed time.
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { assertBuilt, killReplicas, processOwning, startReplica, type Replica } from '../support/cli-replica.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { closeReceivers, startReceiver, type Received } from '../support/webhook-receiver.js';
import { freshAddress, sendMail, sendRaw } from './helpers.js';

let redis: RedisServer;
let prefixes = 0;

beforeAll(async () => {
  assertBuilt();
  redis = await startRedisServer();
});
afterEach(async () => {
  await killReplicas();
  await closeReceivers();
  if (!redis.running) await redis.start();
});
afterAll(async () => {
  await redis?.close();
});

/** A store URL of its own for one test: its replicas share it, other tests do not. */
const sharedStore = () => redis.url(`webhook-replicas-${process.pid}-${++prefixes}`);
const asServer = (replica: Replica): MailroomServer => ({ smtpPort: replica.smtpPort, apiURL: replica.apiURL }) as MailroomServer;

async function api(replica: Replica, path: string, method: 'GET' | 'POST' | 'DELETE' = 'GET', body?: unknown) {
  const response = await request(`${replica.apiURL}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.body.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.statusCode, json, text };
}

type Attempt = { attempt: number; status: number | null; outcome: string; reason: string; copy: number };
type Delivery = { event_id: string; state: string; attempts: Attempt[] };

async function register(replica: Replica, body: Record<string, unknown>): Promise<{ id: string }> {
  const answer = await api(replica, '/api/v1/webhooks', 'POST', body);
  expect(answer.status, answer.text).toBe(201);
  return answer.json.webhook;
}

async function deliveries(replica: Replica, id: string): Promise<Delivery[]> {
  const answer = await api(replica, `/api/v1/webhooks/${id}/deliveries`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json.deliveries;
}

/** Asks until `done` holds (bounded): a wait for the service to get there, not a timing assert. */
async function until<T>(ask: () => Promise<T>, done: (value: T) => boolean, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await ask();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`never: ${what}; last seen ${JSON.stringify(value).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** `mailroom_webhook_attempts_total` on one replica: the attempts it made (and the lost ones it recorded). */
async function attemptsMadeBy(replica: Replica): Promise<number> {
  const text = (await api(replica, '/metrics')).text;
  return Number(/^mailroom_webhook_attempts_total\{event_type="message\.received"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

/** Each (event id, attempt number, copy) the receiver saw, with how many times. */
function counted(received: readonly Received[]): Map<string, number> {
  const seen = new Map<string, number>();
  for (const r of received) {
    const key = `${r.eventId} #${r.attempt}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return seen;
}

const FAST = { max_attempts: 5, initial_delay_ms: 100, factor: 2, max_delay_ms: 400 };

describe('webhooks on replicas sharing one Redis', { timeout: HEAVY_TEST_TIMEOUT_MS }, () => {
  it('a registration through one is known to the other; each attempt of each event is made once, whichever replica took the mail; removed through either, gone for all', async () => {
    const store = sharedStore();
    const [a, b] = await Promise.all([startReplica(store), startReplica(store)]);
    const receiver = await startReceiver();
    // Every event fails twice, then is taken: three attempts each.
    receiver.otherwise = (request) => (request.attempt <= 2 ? { status: 500 } : { status: 204 });
    const address = freshAddress('replicated-hook');
    const hook = await register(a, { url: receiver.url, address, events: ['message.received'], retry: FAST });
    await until(
      () => api(b, `/api/v1/webhooks/${hook.id}`),
      (answer) => answer.status === 200,
      'B knows the webhook',
    );
    expect((await api(b, `/api/v1/webhooks?address=${encodeURIComponent(address)}`)).json.webhooks.map((w: { id: string }) => w.id)).toEqual([hook.id]);

    for (const [i, replica] of [a, b, a, b, a, b].entries()) {
      expect(await sendMail(asServer(replica), { to: address, subject: `mail ${i}`, text: 'x' })).toMatch(/^250 /);
    }
    const log = await until(
      () => deliveries(b, hook.id),
      (d) => d.length === 6 && d.every((x) => x.state === 'delivered'),
      'six events delivered',
    );
    expect(log.map((d) => d.attempts.map((x) => [x.attempt, x.status]))).toEqual(
      Array.from({ length: 6 }, () => [
        [1, 500],
        [2, 500],
        [3, 204],
      ]),
    );
    // At the receiver: 18 requests, each (event, attempt) once.
    expect(receiver.received).toHaveLength(18);
    const seen = counted(receiver.received);
    expect(seen.size).toBe(18);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.eventId))).toEqual(new Set(log.map((d) => d.event_id)));
    // The same log through either replica, and every attempt counted by exactly one of them.
    expect(await deliveries(a, hook.id)).toEqual(log);
    expect((await attemptsMadeBy(a)) + (await attemptsMadeBy(b))).toBe(18);

    // Removed through B: gone for A too; a witness registered through A afterwards hears the next mail, the removed one does not.
    expect((await api(b, `/api/v1/webhooks/${hook.id}`, 'DELETE')).json).toEqual({ deleted: true });
    await until(
      () => api(a, `/api/v1/webhooks/${hook.id}`),
      (answer) => answer.status === 404,
      'A forgets the webhook',
    );
    const witness = await startReceiver();
    const seenBy = await register(a, { url: witness.url, address, events: ['message.received'] });
    await until(
      () => api(b, `/api/v1/webhooks/${seenBy.id}`),
      (answer) => answer.status === 200,
      'B knows the witness',
    );
    await sendMail(asServer(b), { to: address, subject: 'after the removal', text: 'x' });
    await sendMail(asServer(a), { to: address, subject: 'after the removal', text: 'x' });
    await witness.waitFor(2);
    expect(receiver.received).toHaveLength(18);
  });

  it('a replica killed while its attempt is in flight leaves the remaining attempts to the other; the cap stays exact; a restarted replica has everything and replays the dead letter', async () => {
    const store = sharedStore();
    const [a, b] = await Promise.all([startReplica(store), startReplica(store)]);
    const pids = [a.pid, b.pid];
    const receiver = await startReceiver();
    const maker = new Map<number, number | undefined>();
    // Attempt 1 fails, attempt 2 is held unanswered (the replica making it is killed meanwhile), the rest fail.
    receiver.otherwise = (request) => {
      maker.set(request.attempt, processOwning(request.remotePort, receiver.port, pids));
      return request.attempt === 2 ? { hang: true } : { status: 500 };
    };
    const address = freshAddress('killed-mid-attempt');
    const hook = await register(a, {
      url: receiver.url,
      address,
      events: ['message.received'],
      retry: { max_attempts: 4, initial_delay_ms: 200, factor: 2, max_delay_ms: 800 },
      timeout_ms: 120_000,
    });
    await until(
      () => api(b, `/api/v1/webhooks/${hook.id}`),
      (answer) => answer.status === 200,
      'B knows the webhook',
    );
    await sendMail(asServer(b), { to: address, subject: 'retried across a loss', text: 'x' });
    await receiver.waitFor(2);
    const holder = [a, b].find((r) => r.pid === maker.get(2));
    expect(holder, `the replica holding attempt 2 (pids ${pids.join(', ')}; found ${String(maker.get(2))})`).toBeDefined();
    const survivor = holder === a ? b : a;
    await holder!.kill();

    const [dead] = await until(
      () => deliveries(survivor, hook.id),
      (d) => d[0]?.state === 'dead_lettered',
      'the survivor finishes the retries',
    );
    expect(dead!.attempts.map((x) => [x.attempt, x.status, x.reason, x.outcome])).toEqual([
      [1, 500, '500', 'retrying'],
      [2, null, 'lost', 'retrying'],
      [3, 500, '500', 'retrying'],
      [4, 500, '500', 'failed'],
    ]);
    // The receiver saw exactly the four attempts, each once: the lost one was not sent again under its number, nothing past the cap.
    expect(receiver.received.map((r) => r.attempt)).toEqual([1, 2, 3, 4]);
    expect(maker.get(3)).toBe(survivor.pid);
    expect(maker.get(4)).toBe(survivor.pid);
    expect(await attemptsMadeBy(survivor)).toBe(maker.get(1) === survivor.pid ? 4 : 3);

    // A replica started in the killed one's place finds the log and the dead letter, and replays it.
    const again = await startReplica(store);
    expect(await deliveries(again, hook.id)).toEqual(await deliveries(survivor, hook.id));
    const letters = await api(again, `/api/v1/webhooks/${hook.id}/dead-letters`);
    expect(letters.json.dead_letters.map((l: { event_id: string; reason: string }) => [l.event_id, l.reason])).toEqual([[dead!.event_id, '500']]);
    receiver.otherwise = { status: 204 };
    const replay = await api(again, `/api/v1/webhooks/${hook.id}/dead-letters/${dead!.event_id}/replay`, 'POST', {});
    expect(replay.status, replay.text).toBe(202);
    const [delivered] = await until(
      () => deliveries(survivor, hook.id),
      (d) => d[0]?.state === 'delivered',
      'the replay is delivered',
    );
    expect(delivered!.attempts.map((x) => [x.attempt, x.status])).toEqual([
      [1, 500],
      [2, null],
      [3, 500],
      [4, 500],
      [5, 204],
    ]);
    expect(receiver.received.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a replica killed between attempts: the next one is made by the other', async () => {
    const store = sharedStore();
    const [a, b] = await Promise.all([startReplica(store), startReplica(store)]);
    const pids = [a.pid, b.pid];
    const receiver = await startReceiver();
    const maker = new Map<number, number | undefined>();
    receiver.otherwise = (request) => {
      maker.set(request.attempt, processOwning(request.remotePort, receiver.port, pids));
      // 5 s: the kill below must come before the retry is due, and between them
      // are a poll of the log and a SIGKILL on a possibly loaded machine.
      return request.attempt === 1 ? { status: 503, headers: { 'retry-after': '5' } } : { status: 204 };
    };
    const address = freshAddress('killed-between');
    const hook = await register(b, { url: receiver.url, address, events: ['message.received'], retry: FAST });
    await until(
      () => api(a, `/api/v1/webhooks/${hook.id}`),
      (answer) => answer.status === 200,
      'A knows the webhook',
    );
    await sendMail(asServer(a), { to: address, subject: 'retried by the other', text: 'x' });
    // Attempt 1 is recorded (its retry is due 5 s later): kill the replica that made it.
    await until(
      () => deliveries(a, hook.id),
      (d) => d[0]?.attempts.length === 1,
      'attempt 1 recorded',
    );
    const first = [a, b].find((r) => r.pid === maker.get(1));
    expect(first).toBeDefined();
    const other = first === a ? b : a;
    await first!.kill();
    const [done] = await until(
      () => deliveries(other, hook.id),
      (d) => d[0]?.state === 'delivered',
      'the other replica delivers',
    );
    expect(done!.attempts.map((x) => [x.attempt, x.status, x.reason])).toEqual([
      [1, 503, '503'],
      [2, 204, '204'],
    ]);
    expect(maker.get(2)).toBe(other.pid);
    expect(receiver.received.map((r) => r.attempt)).toEqual([1, 2]);
  });

  it('every replica gone between two attempts: a replica started afterwards makes the next one (a restart loses nothing)', async () => {
    const store = sharedStore();
    const only = await startReplica(store);
    const receiver = await startReceiver();
    receiver.otherwise = (request) => (request.attempt === 1 ? { status: 503, headers: { 'retry-after': '3' } } : { status: 204 });
    const address = freshAddress('restarted');
    const hook = await register(only, { url: receiver.url, address, events: ['message.received'], retry: FAST });
    await sendMail(asServer(only), { to: address, subject: 'outlives its server', text: 'x' });
    await until(
      () => deliveries(only, hook.id),
      (d) => d[0]?.attempts.length === 1,
      'attempt 1 recorded',
    );
    await only.kill();
    const next = await startReplica(store);
    expect((await api(next, `/api/v1/webhooks/${hook.id}`)).status).toBe(200);
    const [done] = await until(
      () => deliveries(next, hook.id),
      (d) => d[0]?.state === 'delivered',
      'the new replica delivers',
    );
    expect(done!.attempts.map((x) => [x.attempt, x.status])).toEqual([
      [1, 503],
      [2, 204],
    ]);
    expect(receiver.received.map((r) => r.attempt)).toEqual([1, 2]);
    expect(await attemptsMadeBy(next)).toBe(1);
  });

  it('duplicates: 3 sends each event exactly three times with the same id, never more, whichever replicas send them', async () => {
    const store = sharedStore();
    const [a, b] = await Promise.all([startReplica(store), startReplica(store)]);
    const receiver = await startReceiver();
    const address = freshAddress('dup-replicas');
    const hook = await register(a, { url: receiver.url, address, events: ['message.received'], duplicates: 3, ordered: false });
    await until(
      () => api(b, `/api/v1/webhooks/${hook.id}`),
      (answer) => answer.status === 200,
      'B knows the webhook',
    );
    for (const replica of [a, b, b, a]) await sendMail(asServer(replica), { to: address, subject: 'thrice', text: 'x' });
    const log = await until(
      () => deliveries(a, hook.id),
      (d) => d.length === 4 && d.every((x) => x.state === 'delivered'),
      'four events delivered',
    );
    expect(receiver.received).toHaveLength(12);
    const perEvent = new Map<string, number>();
    for (const r of receiver.received) perEvent.set(r.eventId, (perEvent.get(r.eventId) ?? 0) + 1);
    expect([...perEvent.entries()].sort()).toEqual(log.map((d) => [d.event_id, 3] as const).sort());
    for (const d of log)
      expect(d.attempts.map((x) => [x.copy, x.attempt])).toEqual([
        [1, 1],
        [2, 1],
        [3, 1],
      ]);
  });
});

describe('webhooks through a Redis outage', { timeout: HEAVY_TEST_TIMEOUT_MS }, () => {
  it('an event made while Redis is down (the 451 4.3.0 itself) is held by the replica and delivered once Redis is back; nothing crashes', async () => {
    const store = sharedStore();
    const replica = await startReplica(store);
    const receiver = await startReceiver();
    const address = freshAddress('outage-hook');
    const hook = await register(replica, { url: receiver.url, address, events: ['delivery.deferred'], retry: FAST });
    // The registration is on disk, as a Redis with persistence keeps it through a restart.
    await redis.save();
    await redis.stop(true);

    // With the deferral lab on (the default) its rules are in Redis too: the recipient is deferred at RCPT.
    await expect(sendRaw(replica.smtpPort, 'app@example.com', [address], 'Subject: during the outage\r\n\r\nx\r\n')).rejects.toThrow(
      /451 4\.3\.0 Could not read the test rules for this address/,
    );
    const log = await api(replica, `/api/v1/webhooks/${hook.id}/deliveries`);
    expect(log.status).toBe(503);
    expect(log.json.error).toBe('unavailable');
    expect((await api(replica, '/api/v1/webhooks', 'POST', { url: receiver.url })).status).toBe(503);

    await redis.start();
    await receiver.waitFor(1);
    const event = JSON.parse(receiver.received[0]!.body);
    expect(event).toMatchObject({ type: 'delivery.deferred', address, data: { code: 451, enhanced_code: '4.3.0', outcome: 'deferred', stage: 'rcpt' } });
    const [delivery] = await until(
      () => deliveries(replica, hook.id),
      (d) => d[0]?.state === 'delivered',
      'the held event is delivered',
    );
    expect(delivery!.event_id).toBe(event.id);
    expect(receiver.received).toHaveLength(1);
    expect(replica.child.exitCode).toBeNull();
    expect(replica.output()).toMatch(/holding them here until it is back/);
    expect(replica.output()).toMatch(/1 webhook event\(s\) held here are queued/);
  });
});
