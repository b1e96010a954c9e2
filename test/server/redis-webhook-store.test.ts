// The Redis webhook store on its own, against a real redis-server, as two
// servers see it: each store here has connections of its own on one key
// prefix, as two `mailroom serve` processes on one Redis would. Time is a
// fake clock both share (the store's times all come from the server's
// clock), so leases run out exactly when a test says, without sleeping.
// The servers themselves, killed mid-attempt, are in webhook-replicas.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RedisWebhookStore } from '../../src/server/redis/redis-webhook-store.js';
import { RedisMailStore } from '../../src/server/redis/redis-store.js';
import { MessageGoneError, type EventRecord } from '../../src/server/webhooks/events.js';
import { parseWebhookInput, type Webhook } from '../../src/server/webhooks/registration.js';
import type { Claim } from '../../src/server/webhooks/webhook-store.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { fakeClock, silentLogger, type FakeClock } from './helpers.js';

let redis: RedisServer;
const opened: RedisMailStore[] = [];
let prefixes = 0;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((store) => store.close()));
});
afterAll(async () => {
  await redis?.close();
});

const LEASE_MS = 200;

/** Two servers' views of one Redis: each its own mail store and webhook store, on connections of its own. */
async function twoServers(options: { maxDeliveriesPerWebhook?: number } = {}) {
  const prefix = `wh-store-${process.pid}-${++prefixes}`;
  const clock = fakeClock();
  const open = async () => {
    const mail = await RedisMailStore.open({ url: redis.url(), prefix, clock, retention: 3_600_000, maxMessages: Infinity, logger: silentLogger() });
    opened.push(mail);
    return { mail, webhooks: await mail.webhooks({ leaseMs: LEASE_MS, ...options }) };
  };
  const [a, b] = [await open(), await open()];
  return { a, b, clock };
}

let hooks = 0;
function webhook(clock: FakeClock, fields: Record<string, unknown> = {}): Webhook {
  return parseWebhookInput(
    { url: 'http://127.0.0.1:9/hook', retry: { max_attempts: 3, initial_delay_ms: 100, factor: 2, max_delay_ms: 400 }, ...fields },
    { id: `wh_${String(++hooks).padStart(24, '0')}`, now: clock.now(), mailboxKey: (address) => address.toLowerCase() },
  );
}

let events = 0;
function event(clock: FakeClock, body = '{}'): EventRecord {
  const id = `evt_${String(++events).padStart(32, '0')}`;
  return { id, type: 'delivery.deferred', address: 'a@mailroom.test', createdAt: clock.now(), ref: { kind: 'json', body } };
}

/** Waits (bounded) until `done` holds: for pub/sub to reach the other store, not a timing assert. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Marks a claimed delivery delivered (as the dispatcher would after a 2xx) and writes it back. */
function delivered(store: RedisWebhookStore, claim: Claim, clock: FakeClock): Promise<boolean> {
  const { delivery } = claim;
  delivery.attempts.push({ attempt: 1, copy: 1, at: clock.now(), status: 204, latencyMs: 1, outcome: 'delivered', reason: '204', nextDelayMs: undefined });
  delivery.state = 'delivered';
  delivery.nextAttemptAt = undefined;
  return store.complete(claim, delivery);
}

describe('the Redis webhook store, shared by two servers', () => {
  it('knows a registration made through one on the other, and forgets it on both when removed through the other', async () => {
    const { a, b, clock } = await twoServers();
    const hook = webhook(clock, { address: 'Scoped@mailroom.test' });
    expect((await a.webhooks.add(hook)).id).toBe(hook.id);
    await until(() => b.webhooks.get(hook.id) !== undefined, 'B hears of the registration');
    expect(b.webhooks.get(hook.id)).toEqual(hook);
    expect(b.webhooks.scopedTo('scoped@mailroom.test').map((w) => w.id)).toEqual([hook.id]);
    expect(b.webhooks.subscribers('delivery.deferred', 'scoped@mailroom.test').map((w) => w.id)).toEqual([hook.id]);

    // A second registration under the same id (a static webhook given to both) keeps the first.
    const again = await b.webhooks.add({ ...hook, secret: 'another' });
    expect(again.secret).toBe(hook.secret);

    expect((await b.webhooks.remove(hook.id))?.id).toBe(hook.id);
    expect(b.webhooks.get(hook.id)).toBeUndefined();
    await until(() => a.webhooks.get(hook.id) === undefined, 'A hears of the removal');
    expect(a.webhooks.subscribers('delivery.deferred', 'scoped@mailroom.test')).toEqual([]);
    expect(await a.webhooks.remove(hook.id)).toBeUndefined();
  });

  it('hands each due attempt to exactly one of the servers claiming at once', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock, { ordered: false }));
    const queued = Array.from({ length: 40 }, () => event(clock));
    for (const record of queued) expect(await a.webhooks.enqueue(record, [{ webhookId: hook.id, dueAt: clock.now() }])).toEqual([true]);
    const claimed: string[][] = [[], []];
    // Both ask at the same moment, five at a time, until nothing is left.
    for (let round = 0; round < 20; round++) {
      const batches = await Promise.all([a.webhooks.claim(5), b.webhooks.claim(5)]);
      batches.forEach((batch, i) => claimed[i]!.push(...batch.claims.map((c) => c.delivery.event.id)));
    }
    const all = [...claimed[0]!, ...claimed[1]!];
    expect(all.sort()).toEqual(queued.map((e) => e.id).sort());
    expect(claimed[0]!.length).toBeGreaterThan(0);
    expect(claimed[1]!.length).toBeGreaterThan(0);
    // Claimed and not yet completed: none is handed out again while its lease holds.
    expect((await b.webhooks.claim(64)).claims).toEqual([]);
  });

  it('gives an ordered endpoint one event at a time, in the order queued, whichever server asks', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    const [first, second] = [event(clock), event(clock)];
    await b.webhooks.enqueue(first, [{ webhookId: hook.id, dueAt: clock.now() }]);
    await a.webhooks.enqueue(second, [{ webhookId: hook.id, dueAt: clock.now() }]);
    const [one] = (await b.webhooks.claim(10)).claims;
    expect(one!.delivery.event.id).toBe(first.id);
    expect((await a.webhooks.claim(10)).claims).toEqual([]);
    expect(await delivered(b.webhooks, one!, clock)).toBe(true);
    const [two] = (await a.webhooks.claim(10)).claims;
    expect(two!.delivery.event.id).toBe(second.id);
    expect(two!.webhook).toEqual(hook);
  });

  it('hands an attempt whose lease ran out to another server, naming the lost one; the first server can no longer record it', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    const record = event(clock);
    await a.webhooks.enqueue(record, [{ webhookId: hook.id, dueAt: clock.now() }]);
    const claimedAt = clock.now();
    const [held] = (await a.webhooks.claim(1)).claims;
    expect(held!.lost).toBeUndefined();

    clock.advance(LEASE_MS - 1);
    const early = await b.webhooks.claim(1);
    expect(early.claims).toEqual([]);
    expect(early.nextDueAt).toBe(claimedAt + LEASE_MS);

    clock.advance(2);
    const [taken] = (await b.webhooks.claim(1)).claims;
    expect(taken!.delivery.event.id).toBe(record.id);
    expect(taken!.lost).toEqual({ since: claimedAt, until: claimedAt + LEASE_MS });
    expect(taken!.token).not.toBe(held!.token);
    expect(await delivered(a.webhooks, held!, clock)).toBe(false);
    expect(await delivered(b.webhooks, taken!, clock)).toBe(true);
    expect((await a.webhooks.delivery(hook.id, record.id))?.state).toBe('delivered');
  });

  it('keeps a renewed lease: the other server is given nothing while the attempt is in flight', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    await a.webhooks.enqueue(event(clock), [{ webhookId: hook.id, dueAt: clock.now() }]);
    const [held] = (await a.webhooks.claim(1)).claims;
    for (let i = 0; i < 5; i++) {
      clock.advance(LEASE_MS / 2);
      await a.webhooks.renew([held!]);
      expect((await b.webhooks.claim(1)).claims).toEqual([]);
    }
    expect(await delivered(a.webhooks, held!, clock)).toBe(true);
    expect((await b.webhooks.claim(1)).pending).toBe(0);
  });

  it('schedules a retry at the time the server that made the attempt wrote back, for either server', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    await a.webhooks.enqueue(event(clock), [{ webhookId: hook.id, dueAt: clock.now() }]);
    const [claim] = (await a.webhooks.claim(1)).claims;
    const { delivery } = claim!;
    delivery.attempts.push({ attempt: 1, copy: 1, at: clock.now(), status: 503, latencyMs: 1, outcome: 'retrying', reason: '503', nextDelayMs: 125 });
    delivery.cycleAttempts = 1;
    delivery.nextAttemptAt = clock.now() + 125;
    expect(await a.webhooks.complete(claim!, delivery)).toBe(true);
    const waiting = await b.webhooks.claim(1);
    expect(waiting.claims).toEqual([]);
    expect(waiting.nextDueAt).toBe(clock.now() + 125);
    expect(waiting.pending).toBe(1);
    clock.advance(125);
    const [retry] = (await b.webhooks.claim(1)).claims;
    expect(retry!.delivery.attempts.map((x) => [x.attempt, x.status])).toEqual([[1, 503]]);
    expect(retry!.delivery.cycleAttempts).toBe(1);
    expect(retry!.lost).toBeUndefined();
  });

  it('drops the delivery that finished first when the log is full, never a pending one', async () => {
    const { a, clock } = await twoServers({ maxDeliveriesPerWebhook: 3 });
    const hook = await a.webhooks.add(webhook(clock, { ordered: false }));
    const [e1, e2, e3] = [event(clock), event(clock), event(clock)];
    for (const e of [e1, e2, e3]) expect(await a.webhooks.enqueue(e, [{ webhookId: hook.id, dueAt: clock.now() }])).toEqual([true]);
    const claims = (await a.webhooks.claim(10)).claims;
    const byId = new Map(claims.map((c) => [c.delivery.event.id, c]));
    // e2 finishes before e1; e3 stays pending.
    await delivered(a.webhooks, byId.get(e2.id)!, clock);
    await delivered(a.webhooks, byId.get(e1.id)!, clock);
    const e4 = event(clock);
    expect(await a.webhooks.enqueue(e4, [{ webhookId: hook.id, dueAt: clock.now() }])).toEqual([true]);
    expect((await a.webhooks.deliveries(hook.id)).map((d) => d.event.id)).toEqual([e1.id, e3.id, e4.id]);
    const e5 = event(clock);
    expect(await a.webhooks.enqueue(e5, [{ webhookId: hook.id, dueAt: clock.now() }])).toEqual([true]);
    expect((await a.webhooks.deliveries(hook.id)).map((d) => d.event.id)).toEqual([e3.id, e4.id, e5.id]);
    // All pending now: the next event is refused, nothing owed is forgotten.
    expect(await a.webhooks.enqueue(event(clock), [{ webhookId: hook.id, dueAt: clock.now() }])).toEqual([false]);
    expect((await a.webhooks.deliveries(hook.id)).map((d) => d.event.id)).toEqual([e3.id, e4.id, e5.id]);
    expect(await a.webhooks.pendingCount()).toBe(3);
  });

  it('holds nothing of a message for its pending event: an attempt reads the mail from the store, and finds it gone once the mailbox is deleted', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    const [stored] = await a.mail.deliver(['kept@mailroom.test'], Buffer.from('Subject: kept\r\n\r\nstill here\r\n'), 'app@example.com');
    const record: EventRecord = {
      id: `evt_${'f'.repeat(32)}`,
      type: 'message.received',
      address: stored!.mailbox,
      createdAt: stored!.receivedAt,
      ref: {
        kind: 'message',
        messageId: stored!.id,
        receivedAt: stored!.receivedAt,
        size: stored!.size,
        envelopeFrom: 'app@example.com',
        rawUrl: 'http://x/raw',
      },
    };
    await a.webhooks.enqueue(record, [{ webhookId: hook.id, dueAt: clock.now() }]);
    const [claim] = (await b.webhooks.claim(1)).claims;
    expect(await claim!.delivery.event.payload()).toMatchObject({
      kind: 'message',
      message: { id: stored!.id, source: 'Subject: kept\r\n\r\nstill here\r\n' },
      rawUrl: 'http://x/raw',
    });
    // the event took no reference on the body: it goes with its mailbox, and the next attempt is `gone`
    expect(await b.mail.deleteMailbox('kept@mailroom.test')).toBe(1);
    // (a claim's payload is made once, for its attempt; the next attempt reads the delivery afresh)
    const again = await a.webhooks.delivery(hook.id, record.id);
    await expect(again!.event.payload()).rejects.toBeInstanceOf(MessageGoneError);
  });

  it('replays only a dead letter, queued again behind the others with a fresh budget', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock));
    const record = event(clock);
    await a.webhooks.enqueue(record, [{ webhookId: hook.id, dueAt: clock.now() }]);
    expect(await b.webhooks.replay(hook.id, record.id)).toBeUndefined(); // pending: not a dead letter
    const [claim] = (await a.webhooks.claim(1)).claims;
    const { delivery } = claim!;
    delivery.attempts.push({
      attempt: 1,
      copy: 1,
      at: clock.now(),
      status: 400,
      latencyMs: 1,
      outcome: 'failed',
      reason: '4xx-not-retried',
      nextDelayMs: undefined,
    });
    delivery.cycleAttempts = 1;
    delivery.state = 'dead_lettered';
    delivery.deadAt = clock.now();
    delivery.nextAttemptAt = undefined;
    await a.webhooks.complete(claim!, delivery);
    expect(await a.webhooks.pendingCount()).toBe(0);

    clock.advance(1_000);
    const replayed = await b.webhooks.replay(hook.id, record.id);
    expect(replayed).toMatchObject({ state: 'pending', cycleAttempts: 0, nextAttemptAt: clock.now(), deadAt: undefined });
    expect(await b.webhooks.replay(hook.id, record.id)).toBeUndefined(); // once
    const [again] = (await a.webhooks.claim(1)).claims;
    expect(again!.delivery.event.id).toBe(record.id);
    expect(again!.delivery.attempts).toHaveLength(1);
    expect(await a.webhooks.pendingCount()).toBe(1);
  });

  it('forgets a removed webhook with its queue: nothing of it is claimed, and nothing is pending', async () => {
    const { a, b, clock } = await twoServers();
    const hook = await a.webhooks.add(webhook(clock, { ordered: false }));
    await a.webhooks.enqueue(event(clock), [{ webhookId: hook.id, dueAt: clock.now() }]);
    await a.webhooks.enqueue(event(clock), [{ webhookId: hook.id, dueAt: clock.now() + 1_000 }]);
    const [claim] = (await a.webhooks.claim(1)).claims;
    expect(await b.webhooks.pendingCount()).toBe(2);
    await b.webhooks.remove(hook.id);
    expect(await b.webhooks.pendingCount()).toBe(0);
    clock.advance(2_000);
    expect((await a.webhooks.claim(10)).claims).toEqual([]);
    expect(await delivered(a.webhooks, claim!, clock)).toBe(false);
    expect(await a.webhooks.deliveries(hook.id)).toEqual([]);
  });
});
