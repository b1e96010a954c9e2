// The delivery worker for a store kept by one server (the memory store):
// takes queued events to their endpoints, at least once, with the seed's
// retry strategy (seed 002; each attempt and what its answer means:
// attempt.ts), and
//
// - one endpoint's events one at a time, in order (`ordered`, the
//   default): a failing event holds back the ones after it, as a queue
//   that keeps order must; `ordered: false` sends each on its own;
// - every attempt signed (contract/webhook-signature.ts), built and sent by
//   a `DeliverySender`: in the server, the delivery thread (threaded-sender.ts);
// - the test controls: `duplicates`, `out_of_order`, `first_attempt_delay_ms`.
//
// Time and randomness are injected (`DispatchTimers`, `RandomSource`), so
// the schedule is tested exactly, without sleeping. The state is kept in a
// `WebhookStore` (webhook-store.ts) that may answer later (a shared store):
// a memory store's answers are taken in the same tick, so with it an event
// is queued on the SMTP path itself.
import type { RandomSource } from '../../contract/random.js';
import type { Logger } from '../base/log.js';
import { attemptJob, nextAttemptNumber, replayRefusal, settle, unavailable } from './attempt.js';
import type { WebhookEvent } from './events.js';
import type { WebhookMetrics } from './metrics.js';
import type { Webhook } from './registration.js';
import type { DeliverySender } from './delivery-job.js';
import type { Awaitable } from '../base/awaitable.js';
import type { Delivery, WebhookStore } from './webhook-store.js';

/** `then(value)` at once when `value` is already there (a memory store), else when it comes. */
function whenReady<T>(value: Awaitable<T>, then: (value: T) => void, failed: (error: unknown) => void): void {
  if (value instanceof Promise) value.then(then, failed);
  else then(value);
}

export interface DispatchTimers {
  /** Wall-clock ms (the server's clock). */
  now(): number;
  /** Runs `run` after `ms`; returns the cancel function. */
  after(ms: number, run: () => void): () => void;
  /** Runs `run` soon, after the current I/O (the SMTP reply that caused the event goes out first). */
  soon(run: () => void): void;
}

export const systemTimers = (now: () => number): DispatchTimers => ({
  now,
  after(ms, run) {
    const timer = setTimeout(run, Math.max(0, ms));
    timer.unref();
    return () => clearTimeout(timer);
  },
  soon: (run) => void setImmediate(run),
});

/** How long `out_of_order` holds an event for a second one to swap it with. */
export const OUT_OF_ORDER_HOLD_MS = 1_000;

export interface DispatcherOptions {
  readonly store: WebhookStore;
  readonly sender: DeliverySender;
  readonly timers: DispatchTimers;
  readonly random: RandomSource;
  readonly metrics: WebhookMetrics;
  readonly logger: Logger;
}

/** What the dispatcher keeps of one webhook while it runs: the order of its pending events and its timers. */
interface Lane {
  readonly webhook: Webhook;
  readonly abort: AbortController;
  /** Pending deliveries in the order they go (ordered lanes); for unordered ones, those not yet finished. */
  readonly queue: Delivery[];
  readonly inFlight: Set<Delivery>;
  readonly timers: Map<Delivery | Lane, () => void>;
  /** `out_of_order`: the event held for a second one to overtake it. */
  held: { readonly delivery: Delivery; readonly cancel: () => void } | undefined;
  pumpQueued: boolean;
  removed: boolean;
}

export class WebhookDispatcher {
  readonly #o: DispatcherOptions;
  readonly #lanes = new Map<string, Lane>();
  #closed = false;

  constructor(options: DispatcherOptions) {
    this.#o = options;
  }

  /** Registers a webhook with the store and starts its lane. */
  async add(webhook: Webhook): Promise<void> {
    await this.#o.store.add(webhook);
    this.#laneOf(webhook);
  }

  /** Queues `event` for `webhook`. Cheap: the body is built when the first attempt goes. */
  enqueue(webhook: Webhook, event: WebhookEvent): void {
    if (this.#closed) return;
    const lane = this.#laneOf(webhook);
    const now = this.#o.timers.now();
    const delivery: Delivery = {
      webhookId: webhook.id,
      event,
      state: 'pending',
      attempts: [],
      copy: 1,
      cycleAttempts: 0,
      nextAttemptAt: now + webhook.firstAttemptDelayMs,
      deadAt: undefined,
      excerpt: undefined,
    };
    const dropped = (why: string) => {
      this.#o.metrics.dropped();
      this.#o.logger.warn(`mailroom: webhook ${webhook.id} ${why}; ${event.type} ${event.id} for ${event.address} was dropped`);
    };
    whenReady(
      this.#o.store.enqueue(delivery),
      (kept) => (kept ? this.#queued(lane, delivery) : dropped('has its log full of pending events')),
      (error) => dropped(`could not keep an event: ${String(error)}`),
    );
  }

  /** A delivery the store took: in line now, or, for `out_of_order`, held for the next one to overtake it. */
  #queued(lane: Lane, delivery: Delivery): void {
    if (this.#closed || lane.removed) return;
    if (!lane.webhook.outOfOrder) return this.#release(lane, [delivery]);
    // Swapped pairs: the first of two waits for the second, which then goes first.
    const held = lane.held;
    if (held) {
      held.cancel();
      lane.held = undefined;
      return this.#release(lane, [delivery, held.delivery]);
    }
    lane.held = {
      delivery,
      cancel: this.#o.timers.after(OUT_OF_ORDER_HOLD_MS, () => {
        if (lane.held?.delivery !== delivery) return;
        lane.held = undefined;
        this.#release(lane, [delivery]);
      }),
    };
  }

  /** Stops a webhook: its pending events are cancelled and an attempt in flight is aborted. */
  async remove(id: string): Promise<Webhook | undefined> {
    const lane = this.#lanes.get(id);
    if (lane) this.#stop(lane);
    this.#lanes.delete(id);
    return this.#o.store.remove(id);
  }

  /** Sends a dead letter again with a fresh budget of attempts; undefined when there is no such dead letter. */
  async replay(webhookId: string, eventId: string): Promise<Delivery | undefined> {
    const delivery = await this.#o.store.delivery(webhookId, eventId);
    const lane = this.#lanes.get(webhookId);
    if (!lane || lane.removed || !delivery || delivery.state !== 'dead_lettered') return undefined;
    const refused = replayRefusal(delivery);
    if (refused) throw refused;
    delivery.state = 'pending';
    delivery.cycleAttempts = 0;
    delivery.deadAt = undefined;
    delivery.nextAttemptAt = this.#o.timers.now();
    await this.#o.store.saved(delivery);
    this.#release(lane, [delivery]);
    return delivery;
  }

  /** Events queued or between attempts, over every webhook. */
  get pending(): number {
    let n = 0;
    for (const lane of this.#lanes.values()) n += lane.queue.length + (lane.held ? 1 : 0);
    return n;
  }

  close(): void {
    this.#closed = true;
    for (const lane of this.#lanes.values()) this.#stop(lane);
    this.#lanes.clear();
  }

  #laneOf(webhook: Webhook): Lane {
    let lane = this.#lanes.get(webhook.id);
    if (!lane) {
      lane = { webhook, abort: new AbortController(), queue: [], inFlight: new Set(), timers: new Map(), held: undefined, pumpQueued: false, removed: false };
      this.#lanes.set(webhook.id, lane);
    }
    return lane;
  }

  #stop(lane: Lane): void {
    lane.removed = true;
    lane.abort.abort();
    lane.held?.cancel();
    for (const cancel of lane.timers.values()) cancel();
    lane.timers.clear();
    for (const delivery of [...lane.queue, ...(lane.held ? [lane.held.delivery] : [])]) {
      if (delivery.state === 'pending') {
        delivery.state = 'cancelled';
        delivery.nextAttemptAt = undefined;
      }
    }
    lane.queue.length = 0;
    lane.held = undefined;
  }

  /** Puts deliveries in line, then looks at the lane after the current I/O. */
  #release(lane: Lane, deliveries: readonly Delivery[]): void {
    if (lane.removed) return;
    lane.queue.push(...deliveries);
    if (!lane.webhook.ordered) {
      // After the current I/O too: the SMTP reply that caused the event goes out first.
      this.#o.timers.soon(() => {
        if (lane.removed) return;
        for (const delivery of deliveries) this.#schedule(lane, delivery, delivery);
      });
      return;
    }
    if (lane.pumpQueued) return;
    lane.pumpQueued = true;
    this.#o.timers.soon(() => {
      lane.pumpQueued = false;
      this.#pump(lane);
    });
  }

  /** Ordered lanes: the head of the queue goes when it is due, and only when nothing is in flight. */
  #pump(lane: Lane): void {
    if (lane.removed || lane.inFlight.size > 0) return;
    const head = lane.queue[0];
    if (!head) return;
    this.#schedule(lane, head, lane);
  }

  /** Runs `delivery`'s next attempt when it is due; `key` names the one timer (the lane's, or the delivery's own). */
  #schedule(lane: Lane, delivery: Delivery, key: Delivery | Lane): void {
    lane.timers.get(key)?.();
    const wait = (delivery.nextAttemptAt ?? 0) - this.#o.timers.now();
    const go = () => {
      lane.timers.delete(key);
      void this.#attempt(lane, delivery)
        .then(() => {
          if (lane.removed) return;
          if (delivery.state !== 'pending') {
            const at = lane.queue.indexOf(delivery);
            if (at !== -1) lane.queue.splice(at, 1);
          }
          if (lane.webhook.ordered) this.#pump(lane);
          else if (delivery.state === 'pending') this.#schedule(lane, delivery, delivery);
        })
        .catch((error: unknown) => {
          // A bug, not a failed attempt (those are outcomes): logged, and the server goes on.
          this.#o.logger.error(
            `mailroom: webhook ${lane.webhook.id} failed on ${delivery.event.id}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          );
        });
    };
    if (wait <= 0) return go();
    lane.timers.set(key, this.#o.timers.after(wait, go));
  }

  async #attempt(lane: Lane, delivery: Delivery): Promise<void> {
    const { webhook } = lane;
    const { timers, sender, store, metrics, random } = this.#o;
    lane.inFlight.add(delivery);
    try {
      const attempt = nextAttemptNumber(delivery);
      const at = timers.now();
      const posted = await delivery.event.payload().then(
        (payload) => sender.post(attemptJob(webhook, delivery, attempt, at, payload), lane.abort.signal),
        // The message lives in a shared store that did not answer: nothing went out, and the attempt is retried like a network failure.
        unavailable,
      );
      if (lane.removed) return;
      const finished = settle(delivery, webhook, { number: attempt, at }, posted, timers.now(), random);
      try {
        await store.saved(delivery);
      } catch (error) {
        // The dispatcher goes on from what it holds; a durable store is behind until the next write.
        this.#o.logger.error(`mailroom: webhook ${webhook.id} could not save ${delivery.event.id}'s attempt ${attempt}: ${String(error)}`);
      }
      metrics.attempted(delivery, finished);
      if (delivery.state !== 'pending') metrics.settled(delivery);
    } finally {
      lane.inFlight.delete(delivery);
    }
  }
}
