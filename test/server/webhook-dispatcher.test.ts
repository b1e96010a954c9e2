// The delivery worker on an injected clock: its timers and its random
// source are the test's, so the default schedule (a minute, then five, then
// 25) is checked exactly without waiting for it, and nothing is attempted a
// millisecond before it is due. The attempts themselves still go through a
// real socket to a real receiver.
import { afterEach, describe, expect, it } from 'vitest';
import { AttemptFeed } from '../../src/server/base/smtp-attempts.js';
import { WebhookDispatcher, type DispatchTimers } from '../../src/server/webhooks/dispatcher.js';
import type { WebhookEvent } from '../../src/server/webhooks/events.js';
import { WebhookMetrics } from '../../src/server/webhooks/metrics.js';
import { parseWebhookInput } from '../../src/server/webhooks/registration.js';
import { WebhookSender } from '../../src/server/webhooks/sender.js';
import { createWebhookService } from '../../src/server/webhooks/webhook-service.js';
import { MemoryWebhookStore } from '../../src/server/webhooks/webhook-store.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';

afterEach(closeReceivers);

/** Timers that fire only when the test moves time on. */
class ManualTimers implements DispatchTimers {
  #now = Date.UTC(2030, 0, 1);
  #timers: { at: number; run: () => void }[] = [];
  readonly waits: number[] = [];
  now = () => this.#now;
  after(ms: number, run: () => void): () => void {
    this.waits.push(ms);
    const timer = { at: this.#now + ms, run };
    this.#timers.push(timer);
    return () => void (this.#timers = this.#timers.filter((t) => t !== timer));
  }
  soon(run: () => void): void {
    this.after(0, run);
  }
  /** How long until the next timer falls due, or undefined when none is set. */
  nextDueIn(): number | undefined {
    const next = Math.min(...this.#timers.map((t) => t.at));
    return Number.isFinite(next) ? next - this.#now : undefined;
  }
  /** Moves time on by `ms`, running every timer that falls due, in order. */
  advance(ms: number): void {
    this.#now += ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= this.#now).sort((a, b) => a.at - b.at)[0];
      if (!due) return;
      this.#timers = this.#timers.filter((t) => t !== due);
      due.run();
    }
  }
}

const quiet = { info() {}, warn() {}, error() {} };
let n = 0;
function event(): WebhookEvent {
  const k = ++n;
  const id = `evt_${String(k).padStart(32, '0')}`;
  return {
    id,
    type: 'message.received',
    address: 'a@mailroom.test',
    createdAt: 0,
    payload: () => Promise.resolve({ kind: 'json', body: JSON.stringify({ id, n: k }) }),
    record: () => ({ id, type: 'message.received', address: 'a@mailroom.test', createdAt: 0, ref: { kind: 'json', body: JSON.stringify({ id, n: k }) } }),
  };
}

async function setUp(input: Record<string, unknown>, draws: number[] = [], sender = new WebhookSender()) {
  const receiver = await startReceiver();
  const timers = new ManualTimers();
  const store = new MemoryWebhookStore();
  const dispatcher = new WebhookDispatcher({ store, sender, timers, random: () => draws.shift() ?? 0, metrics: new WebhookMetrics(() => 0), logger: quiet });
  const webhook = parseWebhookInput({ url: receiver.url, ...input }, { id: 'wh_test', now: timers.now(), mailboxKey: (a) => a });
  await dispatcher.add(webhook);
  /** Lets the attempt in flight reach the receiver and its answer come back (real sockets), until the log shows `attempts`. */
  const settle = async (attempts: number) => {
    const deadline = performance.now() + 5_000;
    while (store.deliveries(webhook.id).reduce((sum, d) => sum + d.attempts.length, 0) < attempts) {
      if (performance.now() > deadline) throw new Error('no attempt came');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  return { receiver, timers, store, dispatcher, webhook, settle, close: () => (dispatcher.close(), sender.close()) };
}

describe('the dispatcher on an injected clock', () => {
  it('keeps to the default schedule exactly: nothing a millisecond early, each retry at its step plus the drawn jitter', async () => {
    const { receiver, timers, store, webhook, dispatcher, settle, close } = await setUp({}, [0, 0.5, 0.2]);
    receiver.otherwise = { status: 503 };
    dispatcher.enqueue(webhook, event());
    timers.advance(0);
    await settle(1);
    // Retry 1: the 60 s step, jitter drawn 0.
    timers.advance(59_999);
    // Nothing ran: the retry's timer falls due in exactly one more millisecond.
    expect(timers.nextDueIn()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    timers.advance(1);
    await settle(2);
    // Retry 2: the 5 min step plus half of a half (draw 0.5): 375 s.
    timers.advance(374_999);
    expect(timers.nextDueIn()).toBe(1);
    expect(receiver.received).toHaveLength(2);
    timers.advance(1);
    await settle(3);
    const [delivery] = store.deliveries(webhook.id);
    // Retry 3: the 25 min step plus a tenth of it (draw 0.2).
    expect(delivery!.attempts.map((a) => a.nextDelayMs)).toEqual([60_000, 375_000, 1_650_000]);
    expect(delivery!.nextAttemptAt! - delivery!.attempts[2]!.at).toBe(1_650_000);
    await close();
  });

  it('in order: the second event waits behind the first one retrying', async () => {
    const { receiver, timers, store, webhook, dispatcher, settle, close } = await setUp({ retry: { initial_delay_ms: 1_000 } });
    receiver.script.push({ status: 500 });
    dispatcher.enqueue(webhook, event());
    dispatcher.enqueue(webhook, event());
    timers.advance(0);
    await settle(1);
    // The second is held while the first waits for its retry: the one timer set is that retry's.
    expect(timers.nextDueIn()).toBe(1_000);
    expect(store.deliveries(webhook.id).map((d) => d.attempts.length)).toEqual([1, 0]);
    timers.advance(1_000);
    await settle(3);
    expect(store.deliveries(webhook.id).map((d) => d.state)).toEqual(['delivered', 'delivered']);
    expect(receiver.received.map((r) => JSON.parse(r.body).n)).toEqual([n - 1, n - 1, n]);
    await close();
  });

  it('in order, a backlog goes to the sender as one run: one POST at a time, and the first that fails ends the run before the rest', async () => {
    // The runs handed over, by length: the delivery thread gets one message per run, not one per event.
    const runs: number[] = [];
    const sender = new WebhookSender();
    const postRun = sender.postRun.bind(sender);
    sender.postRun = (jobs, signal) => (runs.push(jobs.length), postRun(jobs, signal));
    const { receiver, timers, store, webhook, dispatcher, settle, close } = await setUp({ retry: { initial_delay_ms: 1_000 } }, [], sender);
    receiver.script.push({ status: 204 }, { status: 204 }, { status: 503 });
    for (let i = 0; i < 5; i++) dispatcher.enqueue(webhook, event());
    timers.advance(0);
    await settle(3);
    // The third failed: the run stopped there, and the two behind it were not sent.
    expect(runs).toEqual([5]);
    expect(store.deliveries(webhook.id).map((d) => [d.state, d.attempts.length])).toEqual([
      ['delivered', 1],
      ['delivered', 1],
      ['pending', 1],
      ['pending', 0],
      ['pending', 0],
    ]);
    expect(timers.nextDueIn()).toBe(1_000);
    timers.advance(1_000);
    await settle(6);
    // The retried one heads the next run, and the order of the POSTs is the order of the events.
    expect(runs).toEqual([5, 3]);
    const ns = receiver.received.map((r) => JSON.parse(r.body).n as number);
    expect(ns).toEqual([n - 4, n - 3, n - 2, n - 2, n - 1, n]);
    expect(store.deliveries(webhook.id).every((d) => d.state === 'delivered')).toBe(true);
    // Each attempt is recorded when it went out, and signed with that moment.
    const [first, second] = store.deliveries(webhook.id);
    expect(second!.attempts[0]!.at - first!.attempts[0]!.at).toBeGreaterThan(0);
    expect(receiver.received[1]!.headers['mailroom-signature']).toContain(`t=${Math.floor(second!.attempts[0]!.at / 1000)}`);
    await close();
  });

  it('a payload the store cannot give (a shared store out of reach) is an attempt that sends nothing, logged unavailable, and retried', async () => {
    const { receiver, timers, store, webhook, dispatcher, settle, close } = await setUp({ retry: { initial_delay_ms: 1_000 } }, [0]);
    const ok = event();
    let asked = 0;
    dispatcher.enqueue(webhook, {
      ...ok,
      payload: () => (++asked === 1 ? Promise.reject(new Error('The store at redis://… cannot be reached')) : ok.payload()),
    });
    timers.advance(0);
    await settle(1);
    const [first] = store.deliveries(webhook.id);
    expect(first!.attempts).toMatchObject([{ attempt: 1, status: undefined, reason: 'unavailable', outcome: 'retrying', nextDelayMs: 1_000 }]);
    expect(receiver.received).toHaveLength(0);
    timers.advance(1_000);
    await settle(2);
    expect(store.deliveries(webhook.id)[0]!.state).toBe('delivered');
    expect(receiver.received.map((r) => r.eventId)).toEqual([ok.id]);
    expect(asked).toBe(2);
    await close();
  });

  it('on the memory store (the default) an event is queued on the SMTP path itself, in the same tick', () => {
    const attempts = new AttemptFeed((error) => {
      throw error;
    });
    const timers = new ManualTimers();
    const store = new MemoryWebhookStore();
    const service = createWebhookService({
      attempts,
      rawUrl: () => '',
      readSource: () => Promise.resolve(undefined),
      mailboxKey: (a) => a,
      now: timers.now,
      random: () => 0,
      logger: quiet,
      store,
      timers,
      sender: { post: () => new Promise(() => {}), close: async () => {} },
    });
    const webhook = parseWebhookInput(
      { url: 'http://127.0.0.1:9/', events: ['delivery.rejected'] },
      { id: 'wh_same_tick', now: timers.now(), mailboxKey: (a) => a },
    );
    // Registered straight into the store (the service's register is a promise): the fan-out reads the registrations from it.
    store.add(webhook);
    attempts.publish(
      {
        at: timers.now(),
        clientIp: '127.0.0.1',
        from: 'app@example.com',
        to: 'a@mailroom.test',
        stage: 'data',
        code: 550,
        enhancedCode: '5.1.1',
        text: 'No such mailbox',
        outcome: 'rejected',
      },
      undefined,
    );
    // No await between the SMTP outcome and this line: the event is already kept.
    expect(store.deliveries(webhook.id).map((d) => [d.event.type, d.state])).toEqual([['delivery.rejected', 'pending']]);
    void service.close();
  });
});

describe("an SES webhook's notifications wait for its subscription to be confirmed", () => {
  /** An event of `type` (the engine's own kinds are all it reads of one). */
  function typed(type: 'provider.subscription' | 'provider.delivered' | 'provider.bounced'): WebhookEvent {
    const base = event();
    const record = { ...base.record(), type };
    return { ...base, type, record: () => record };
  }

  it.each([true, false])('ordered %s: held with no timer, never attempted, through an hour; confirmed, they go at once, in order', async (ordered) => {
    const { receiver, timers, store, webhook, dispatcher, settle, close } = await setUp({ format: 'ses', ordered });
    const confirmation = typed('provider.subscription');
    const notifications = [typed('provider.delivered'), typed('provider.bounced')];
    for (const e of [confirmation, ...notifications]) dispatcher.enqueue(webhook, e);
    timers.advance(0);
    await settle(1);
    timers.advance(3_600_000);
    // Only the confirmation request went; nothing is scheduled for the rest (no timer to fall due, no retry, no dead letter).
    expect(receiver.received.map((r) => r.eventId)).toEqual([confirmation.id]);
    expect(timers.nextDueIn()).toBeUndefined();
    expect(store.deliveries(webhook.id).map((d) => [d.event.type, d.state, d.attempts.length])).toEqual([
      ['provider.subscription', 'delivered', 1],
      ['provider.delivered', 'pending', 0],
      ['provider.bounced', 'pending', 0],
    ]);
    expect(dispatcher.pending).toBe(2);

    expect(dispatcher.confirm(webhook.id)).toBe(true);
    expect(dispatcher.confirm(webhook.id)).toBe(false);
    timers.advance(0);
    await settle(ordered ? 2 : 3);
    if (ordered) {
      timers.advance(0);
      await settle(3);
    }
    expect(receiver.received.map((r) => r.eventId)).toEqual([confirmation.id, ...notifications.map((e) => e.id)]);
    expect(store.deliveries(webhook.id).every((d) => d.state === 'delivered')).toBe(true);
    // Once confirmed, a new notification is not held.
    dispatcher.enqueue(webhook, typed('provider.delivered'));
    timers.advance(0);
    await settle(4);
    await close();
  });

  it('held events count against the log like any pending one: past it a new one is dropped, counted, and logged naming the unconfirmed subscription', () => {
    const timers = new ManualTimers();
    const store = new MemoryWebhookStore({ maxDeliveriesPerWebhook: 3 });
    const warned: string[] = [];
    const metrics = new WebhookMetrics(() => 0);
    const sender = { post: () => Promise.reject(new Error('nothing is sent: the subscription is unconfirmed')), close: () => Promise.resolve() };
    const logger = { info() {}, warn: (line: string) => void warned.push(line), error() {} };
    const dispatcher = new WebhookDispatcher({ store, sender, timers, random: () => 0, metrics, logger });
    const webhook = parseWebhookInput({ url: 'http://127.0.0.1:9/hooks/ses', format: 'ses' }, { id: 'wh_full', now: timers.now(), mailboxKey: (a) => a });
    void dispatcher.add(webhook);
    for (let i = 0; i < 4; i++) dispatcher.enqueue(webhook, typed('provider.delivered'));
    timers.advance(3_600_000);
    expect(store.deliveries(webhook.id).map((d) => [d.state, d.attempts.length])).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
    expect(warned).toEqual([
      expect.stringMatching(
        /^mailroom: webhook wh_full has its log full of pending events \(the SNS subscription of webhook wh_full \(http:\/\/127\.0\.0\.1:9\/hooks\/ses\) is unconfirmed: .*\); provider\.delivered evt_\w+ for a@mailroom\.test was dropped$/,
      ),
    ]);
    dispatcher.close();
  });
});
