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
//   an ordered endpoint's backlog is handed over as runs (`#runOf`), one
//   message to the thread and one back per run rather than per event, which
//   is most of what a webhook costs the SMTP thread while mail pours in;
// - the test controls: `duplicates`, `out_of_order`, `first_attempt_delay_ms`;
// - an SES webhook's notifications held, unattempted and without a timer,
//   until its subscription is confirmed (subscription.ts, `confirm`).
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
import type { DeliveryJob, DeliveryOutcome, DeliverySender, EventPayload } from './delivery-job.js';
import { whenReady } from '../base/awaitable.js';
import type { Delivery, WebhookStore } from './webhook-store.js';
import { unconfirmedText, waitsForConfirmation } from './subscription.js';

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

/** An ordered lane's run (`#runOf`): at most this many events in one hand-over to the sender... */
const MAX_RUN = 64;
/** ...and the sources of at most about this many bytes (copies made for the hand-over). */
const MAX_RUN_BYTES = 1024 * 1024;

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
  /** Said once in the log that its events are held for the subscription's confirmation. */
  saidHeld: boolean;
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
      const held = this.#held(lane, delivery) ? ` (${unconfirmedText(webhook)})` : '';
      this.#o.logger.warn(`mailroom: webhook ${webhook.id} ${why}${held}; ${event.type} ${event.id} for ${event.address} was dropped`);
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

  /**
   * The webhook's subscription was confirmed: its held events go now, in
   * their order. False when it was confirmed already (or is unknown).
   */
  confirm(webhookId: string): boolean {
    if (!this.#o.store.confirm(webhookId)) return false;
    const lane = this.#lanes.get(webhookId);
    if (lane && !lane.removed) {
      if (lane.webhook.ordered) this.#pump(lane);
      else for (const delivery of lane.queue) if (!lane.timers.has(delivery) && !lane.inFlight.has(delivery)) this.#schedule(lane, delivery, delivery);
    }
    return true;
  }

  /** An event that waits for the webhook's subscription to be confirmed (subscription.ts). */
  #held(lane: Lane, delivery: Delivery): boolean {
    return waitsForConfirmation(lane.webhook, delivery.event.type) && this.#o.store.confirmedAt(lane.webhook.id) === undefined;
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
      lane = {
        webhook,
        abort: new AbortController(),
        queue: [],
        inFlight: new Set(),
        timers: new Map(),
        held: undefined,
        pumpQueued: false,
        removed: false,
        saidHeld: false,
      };
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
    lane.timers.delete(key);
    if (this.#held(lane, delivery)) {
      // No timer: `confirm` looks again. Said once, so a test's log shows why nothing goes.
      if (!lane.saidHeld) this.#o.logger.info(`mailroom: ${unconfirmedText(lane.webhook)}`);
      lane.saidHeld = true;
      return;
    }
    const wait = (delivery.nextAttemptAt ?? 0) - this.#o.timers.now();
    const go = () => {
      lane.timers.delete(key);
      void this.#attempt(lane, delivery)
        .then((attempted) => {
          if (lane.removed) return;
          for (const done of attempted) {
            if (done.state === 'pending') continue;
            // An ordered lane's run is the head of its queue: taken off the front, not searched for in a long backlog.
            if (lane.queue[0] === done) lane.queue.shift();
            else {
              const at = lane.queue.indexOf(done);
              if (at !== -1) lane.queue.splice(at, 1);
            }
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

  /**
   * An ordered lane's head and the due events behind it, sent as one run
   * (`DeliverySender.postRun`) when the sender takes runs: one hand-over to
   * the delivery thread for a backlog instead of one per event. Only while
   * nothing changes the order of attempts: one copy of each event
   * (`duplicates` sends the next copy of the head first), and at most
   * `MAX_RUN` events or `MAX_RUN_BYTES` of sources.
   */
  #runOf(lane: Lane, head: Delivery): Delivery[] {
    const run = [head];
    if (!lane.webhook.ordered || lane.webhook.duplicates > 1 || !this.#o.sender.postRun || lane.queue[0] !== head) return run;
    const now = this.#o.timers.now();
    for (let i = 1; i < lane.queue.length && run.length < MAX_RUN; i++) {
      const next = lane.queue[i]!;
      if (next.state !== 'pending' || (next.nextAttemptAt ?? 0) > now || this.#held(lane, next)) break;
      run.push(next);
    }
    return run;
  }

  /** Attempts `delivery` (with the run behind it, `#runOf`) and records what came back; the deliveries attempted. */
  async #attempt(lane: Lane, delivery: Delivery): Promise<readonly Delivery[]> {
    const { webhook } = lane;
    const { timers, sender, store, metrics, random } = this.#o;
    const run = this.#runOf(lane, delivery);
    for (const member of run) lane.inFlight.add(member);
    try {
      const at = timers.now();
      const jobs: DeliveryJob[] = [];
      let posted: readonly DeliveryOutcome[] | undefined;
      let bytes = 0;
      for (const member of run) {
        let payload: EventPayload;
        try {
          payload = await member.event.payload();
        } catch (error) {
          // The head's message could not be read: nothing goes, and that is its outcome. A later one's: the run ends before it.
          if (jobs.length === 0) posted = [unavailable(error)];
          break;
        }
        jobs.push(attemptJob(webhook, member, nextAttemptNumber(member), at, payload));
        bytes += payload.kind === 'message' ? payload.message.source.length : payload.body.length;
        if (bytes >= MAX_RUN_BYTES) break;
      }
      posted ??= jobs.length > 1 && sender.postRun ? await sender.postRun(jobs, lane.abort.signal) : [await sender.post(jobs[0]!, lane.abort.signal)];
      if (lane.removed) return [];
      const attempted = run.slice(0, posted.length);
      const now = timers.now();
      for (const [i, member] of attempted.entries()) {
        const outcome = posted[i]!;
        const attempt = nextAttemptNumber(member);
        const finished = settle(member, webhook, { number: attempt, at: at + (outcome.startedAfterMs ?? 0) }, outcome, now, random);
        try {
          await store.saved(member);
        } catch (error) {
          // The dispatcher goes on from what it holds; a durable store is behind until the next write.
          this.#o.logger.error(`mailroom: webhook ${webhook.id} could not save ${member.event.id}'s attempt ${attempt}: ${String(error)}`);
        }
        metrics.attempted(member, finished);
        if (member.state !== 'pending') metrics.settled(member);
      }
      return attempted;
    } finally {
      for (const member of run) lane.inFlight.delete(member);
    }
  }
}
