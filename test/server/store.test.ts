// The store against a naive model, through thousands of random operations:
// tombstones, compaction, expiry and the cap must never change what is listed.
// Part of the server contract suite (vitest.config.ts): the `redis` project
// runs the same tests on the Redis store (`openTestStore`), fewer steps of
// the model since each is a round trip.
import { describe, expect, inject, it } from 'vitest';
import { WaitSlots } from '../../src/contract/wait-slots.js';
import type { StoredMessage } from '../../src/server/base/stored-message.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { fakeClock, openTestStore } from './helpers.js';

// Each Redis step is some 17 round trips: 1,500 steps took 12 s at a load average of 12 on this 2-core machine, and over 60 s at 25.
const STEPS = inject('redisURL') ? 800 : 5_000;

interface ModelMessage {
  id: string;
  mailbox: string;
  receivedAt: number;
}

function lcg(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % n;
  };
}

describe('the store', () => {
  it('matches a naive model through random delivers, deletes, expiry and eviction', { timeout: HEAVY_TEST_TIMEOUT_MS }, async () => {
    const clock = fakeClock();
    const evicted: string[] = [];
    const { store } = await openTestStore({ clock, retention: 5_000, maxMessages: 60, onEvict: (m) => evicted.push(m.id) });
    const random = lcg(7);
    const mailboxes = ['a@x.test', 'b@x.test', 'c@x.test', 'd@x.test', 'e@x.test'];
    let model: ModelMessage[] = [];
    const issued: string[] = []; // every id ever stored, also the deleted and expired ones
    const expireModel = () => {
      model = model.filter((m) => m.receivedAt > clock.now() - 5_000);
    };
    for (let step = 0; step < STEPS; step++) {
      const op = random(100);
      if (op < 55) {
        const to = Array.from({ length: 1 + random(3) }, () => mailboxes[random(mailboxes.length)]!);
        expireModel();
        const stored = await store.deliver(to, Buffer.from(`Subject: ${step}\r\n\r\nx`));
        expect(stored.map((m) => m.mailbox)).toEqual([...new Set(to)]);
        for (const m of stored) {
          model.push({ id: m.id, mailbox: m.mailbox, receivedAt: m.receivedAt });
          issued.push(m.id);
        }
        while (model.length > 60) expect(evicted).toContain(model.shift()!.id);
      } else if (op < 75 && model.length > 0) {
        const victim = model[random(model.length)]!;
        expireModel();
        const existed = model.includes(victim);
        expect(await store.delete(victim.mailbox, victim.id)).toBe(existed);
        model = model.filter((m) => m !== victim);
        expect(await store.delete(victim.mailbox, victim.id)).toBe(false);
      } else if (op < 78) {
        const mailbox = mailboxes[random(mailboxes.length)]!;
        expireModel();
        expect(await store.deleteMailbox(mailbox)).toBe(model.filter((m) => m.mailbox === mailbox).length);
        model = model.filter((m) => m.mailbox !== mailbox);
      } else {
        clock.advance(random(400));
      }
      expireModel();
      for (const mailbox of mailboxes) {
        const expected = model
          .filter((m) => m.mailbox === mailbox)
          .map((m) => m.id)
          .reverse();
        expect((await store.list(mailbox, 1000)).map((m) => m.id)).toEqual(expected);
        expect((await store.list(mailbox, 3)).map((m) => m.id)).toEqual(expected.slice(0, 3));
        // "newer than" an id that may be live, deleted or expired: what a server-side wait looks at
        const since = issued.length > 0 && random(4) > 0 ? issued[random(issued.length)] : undefined;
        expect((await store.newerThan(mailbox, since)).map((m) => m.id)).toEqual(since === undefined ? expected : expected.filter((id) => id > since));
      }
      expect(await store.count()).toBe(model.length);
    }
    expect(evicted.length).toBeGreaterThan(0);
  });

  it('wakes arrival listeners for their mailbox only, after the message is visible', async () => {
    // The store swallows a listener's errors (the next test), so the listener
    // only records what it saw; the assertions run here, after delivery.
    const listenerErrors: unknown[] = [];
    const { store } = await openTestStore({ clock: fakeClock(), retention: 60_000, maxMessages: 100, onListenerError: (e) => listenerErrors.push(e) });
    const seen: Array<Promise<{ id: string; newestListed: string | undefined }>> = [];
    const stop = store.onArrival('a@x.test', (message: StoredMessage | undefined) => {
      // a store's own deliveries always name the message (only a shared store's feed, back after a break, says "look again")
      seen.push(Promise.resolve(store.list('a@x.test', 1)).then((listed) => ({ id: message!.id, newestListed: listed[0]?.id })));
    });
    const [first] = await store.deliver(['a@x.test', 'b@x.test'], Buffer.from('Subject: one\r\n\r\nx'));
    await store.deliver(['b@x.test'], Buffer.from('Subject: two\r\n\r\nx'));
    stop();
    await store.deliver(['a@x.test'], Buffer.from('Subject: three\r\n\r\nx'));
    // the message was already listed when the listener ran
    expect(await Promise.all(seen)).toEqual([{ id: first!.id, newestListed: first!.id }]);
    expect(listenerErrors).toEqual([]);
  });

  it('keeps a throwing listener from breaking delivery', async () => {
    const errors: unknown[] = [];
    const { store } = await openTestStore({ clock: fakeClock(), retention: 60_000, maxMessages: 100, onListenerError: (e) => errors.push(e) });
    store.onArrival('a@x.test', () => {
      throw new Error('listener bug');
    });
    expect(await store.deliver(['a@x.test'], Buffer.from('x'))).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(await store.list('a@x.test', 5)).toHaveLength(1);
  });
});

describe('Budget', () => {
  it('allows N calls in any sliding window and reports what is left', async () => {
    const clock = fakeClock(0);
    const budget = (await openTestStore({ clock, retention: 60_000, maxMessages: 10 })).budget(3);
    expect([await budget.take('k'), await budget.take('k'), await budget.take('k')].every((d) => d.allowed)).toBe(true);
    clock.advance(250);
    const refused = await budget.take('k');
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 750, retryAfterSeconds: 1 });
    clock.advance(750);
    expect((await budget.take('k')).allowed).toBe(true);
    expect((await budget.take('other')).allowed).toBe(true);
  });

  it('record() spends a call even over the allowance, pushing the next allowed call a whole window back', async () => {
    const clock = fakeClock(0);
    const budget = (await openTestStore({ clock, retention: 60_000, maxMessages: 10 })).budget(1);
    expect((await budget.take('k')).allowed).toBe(true);
    clock.advance(400);
    await budget.record('k'); // over the allowance: recorded anyway
    clock.advance(700); // 1.1 s after the take, 0.7 s after the record
    expect(await budget.take('k')).toMatchObject({ allowed: false, retryAfterMs: 300, retryAfterSeconds: 1 });
    clock.advance(300);
    expect((await budget.take('k')).allowed).toBe(true);
    await budget.record('fresh');
    expect((await budget.take('fresh')).allowed).toBe(false);
  });

  it('is disabled by Infinity', async () => {
    const budget = (await openTestStore({ clock: fakeClock(0), retention: 60_000, maxMessages: 10 })).budget(Infinity);
    for (let i = 0; i < 1000; i++) expect((await budget.take('k')).allowed).toBe(true);
    await budget.record('k');
    expect((await budget.take('k')).allowed).toBe(true);
  });
});

describe('WaitSlots', () => {
  it('gives out at most its capacity, queues nothing, and takes back each slot once', () => {
    const slots = new WaitSlots(2);
    const a = slots.tryTake();
    const b = slots.tryTake();
    expect(a && b).toBeTruthy();
    expect(slots.tryTake()).toBeUndefined();
    expect(slots.inUse).toBe(2);
    a!();
    a!(); // idempotent
    expect(slots.inUse).toBe(1);
    expect(slots.tryTake()).toBeTruthy();
    expect(slots.tryTake()).toBeUndefined();
  });
});
