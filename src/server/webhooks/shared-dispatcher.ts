// The delivery worker for a shared store (webhook-store.ts,
// `SharedWebhookStore`: Redis), one per server on it. Where the memory
// dispatcher (dispatcher.ts) holds each endpoint's queue and timers itself,
// here the store holds them for every server, and each server claims the
// attempts that are due: the store hands each one to exactly one server,
// under a lease this server renews while the attempt is in flight. What an
// answer means (classification, backoff and jitter, the cap, `duplicates`)
// is the same code as the memory dispatcher's (attempt.ts); the outcome is
// written back with the lease (`complete`), and the store then knows when
// the event's next attempt is due, for whichever server comes first.
//
// - When to look: the store announces when something becomes due (an event
//   queued, retried or replayed through another server; a server looks by
//   itself after its own); each claim also says
//   when the next attempt of all is due. A timer is set for that, and the
//   queue is looked at at least every `LOOK_EVERY_MS` while webhooks exist
//   (an announcement missed during a break is caught up).
// - A server killed mid-attempt: its lease runs out, the next server to
//   claim the event records that attempt as `lost` (it counts toward the
//   cap) and retries after the backoff. A server shut down mid-attempt
//   records it so itself.
// - Events are queued from the SMTP path without waiting (the reply is not
//   held): when the store cannot be reached they are held here, in order,
//   and written when it is back (at most `OUTBOX_MAX`; past that an event
//   is dropped, counted and logged, never silently). A server killed while
//   holding some loses those.
import type { RandomSource } from '../../contract/random.js';
import type { Logger } from '../base/log.js';
import { attemptJob, nextAttemptNumber, replayRefusal, settle, unavailable } from './attempt.js';
import type { DispatchTimers } from './dispatcher.js';
import type { DeliveryOutcome, DeliverySender, EventPayload } from './delivery-job.js';
import type { EventRecord, WebhookEvent } from './events.js';
import type { WebhookMetrics } from './metrics.js';
import type { Webhook } from './registration.js';
import type { Claim, ClaimBatch, Delivery, DeliveryAttempt, SharedWebhookStore } from './webhook-store.js';
import { unconfirmedText, waitsForConfirmation } from './subscription.js';

/** Attempts in flight from this server at once. */
const MAX_IN_FLIGHT = 64;
/** An unordered endpoint's due events claimed together with an attempt's outcome. */
const FOLLOW_UNORDERED = 8;
/** The queue is looked at at least this often while webhooks exist. */
const LOOK_EVERY_MS = 2_000;
/** After a look that was given nothing although something was due, the next look waits this long at least. */
const IDLE_RETRY_MS = 50;
/** A store out of reach is tried again this often. */
const RETRY_STORE_MS = 500;
/** Events held here while the store cannot be reached. */
export const OUTBOX_MAX = 10_000;
/** Events made here, kept so their first attempt here takes the message from memory. */
const MADE_KEPT = 256;
/** How long a removed webhook's id is remembered, so a claim already on its way is not acted on. */
const REMOVED_KEPT_MS = 60_000;

export interface SharedDispatcherOptions {
  readonly store: SharedWebhookStore;
  readonly sender: DeliverySender;
  readonly timers: DispatchTimers;
  readonly random: RandomSource;
  readonly metrics: WebhookMetrics;
  readonly logger: Logger;
}

interface Queued {
  readonly record: EventRecord;
  readonly targets: readonly { readonly webhookId: string; readonly dueAt: number }[];
}

const lostOutcome = (latencyMs: number, why: string): DeliveryOutcome => ({
  result: { kind: 'failure', reason: 'lost', detail: why },
  latencyMs,
  excerpt: '',
});

export class SharedDispatcher {
  /** A pump or flush that threw (a bug, not the store out of reach, which they handle): logged, and the next wake-up tries again. */
  readonly #failed = (error: unknown): void => {
    this.#o.logger.error(`mailroom: webhook delivery failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  };
  readonly #o: SharedDispatcherOptions;
  readonly #inFlight = new Map<string, { readonly claim: Claim; run: Promise<void> }>();
  /** Per webhook: aborts its attempts in flight here when it is removed. */
  readonly #aborts = new Map<string, AbortController>();
  readonly #removed = new Map<string, number>();
  /** Attempts in flight from here, per webhook. */
  readonly #busy = new Map<string, number>();
  /** Ordered webhooks busy here when an event was queued for them: the attempt in flight looks again when it is done. */
  readonly #behind = new Set<string>();
  /** Aborts every attempt in flight when the server closes. */
  readonly #closing = new AbortController();
  /** Events made here and not yet attempted (`MADE_KEPT` at most). */
  readonly #made = new Map<string, WebhookEvent>();
  readonly #outbox: Queued[] = [];
  readonly #stops: (() => void)[];
  #timer: { readonly at: number; readonly cancel: () => void } | undefined;
  #renewal: (() => void) | undefined;
  #flushTimer: (() => void) | undefined;
  #flushing = false;
  #pumping = false;
  #again = false;
  #pending = 0;
  #storeLost = false;
  #closed = false;

  constructor(options: SharedDispatcherOptions) {
    this.#o = options;
    const { store } = options;
    this.#stops = [
      store.onDue((at) => this.#wake(at)),
      store.onRemoved((id) => this.#stop(id)),
      store.onReconnect(() => {
        this.#wake(0);
        void this.#flush().catch(this.#failed);
      }),
    ];
    // Events pending from before this server started (a restart, other servers' events): look now.
    this.#wake(0);
  }

  /** Stores a registration; the one in effect comes back (a static webhook another server registered first). */
  add(webhook: Webhook): Promise<Webhook> {
    return this.#o.store.add(webhook);
  }

  /** Queues `event` for `webhooks`, without waiting for the store: the SMTP reply is not held. */
  enqueue(webhooks: readonly Webhook[], event: WebhookEvent): void {
    if (this.#closed) return;
    const now = this.#o.timers.now();
    const queued: Queued = { record: event.record(), targets: webhooks.map((w) => ({ webhookId: w.id, dueAt: now + w.firstAttemptDelayMs })) };
    // Behind events already held: they go first, in order.
    if (this.#outbox.length > 0) return this.#hold(queued);
    this.#remember(event);
    this.#o.store.enqueue(queued.record, queued.targets).then(
      (kept) => this.#kept(queued, kept),
      (error: unknown) => this.#hold(queued, { said: error }),
    );
  }

  /** Stops a webhook for every server: its attempts in flight here are aborted, and the store forgets it. */
  async remove(id: string): Promise<Webhook | undefined> {
    this.#stop(id);
    return this.#o.store.remove(id);
  }

  /** Sends a dead letter again with a fresh budget of attempts, from whichever server claims it first. */
  async replay(webhookId: string, eventId: string): Promise<Delivery | undefined> {
    if (!this.#o.store.get(webhookId)) return undefined;
    const dead = await this.#o.store.delivery(webhookId, eventId);
    const refused = dead?.state === 'dead_lettered' ? replayRefusal(dead) : undefined;
    if (refused) throw refused;
    const replayed = await this.#o.store.replay(webhookId, eventId);
    if (replayed) this.#wake(this.#o.timers.now());
    return replayed;
  }

  /**
   * The webhook's subscription was confirmed (subscription.ts): the store
   * makes its held events due now, for whichever server claims them first.
   */
  async confirm(webhookId: string): Promise<boolean> {
    const first = await this.#o.store.confirm(webhookId);
    if (first) this.#wake(this.#o.timers.now());
    return first;
  }

  /** Events pending over every webhook and server, as the store last said. */
  get pending(): number {
    return this.#pending;
  }

  /** The same, asked of the store now (the last known count when it cannot answer). */
  async pendingNow(): Promise<number> {
    try {
      return (this.#pending = await this.#o.store.pendingCount());
    } catch {
      return this.#pending;
    }
  }

  /** Stops claiming; attempts in flight here are cut short and recorded as lost (another server retries them). */
  async close(): Promise<void> {
    this.#closed = true;
    for (const stop of this.#stops) stop();
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#flushTimer?.();
    this.#closing.abort();
    await Promise.allSettled([...this.#inFlight.values()].map((f) => f.run));
    this.#renewal?.();
    if (this.#outbox.length > 0) {
      this.#o.logger.error(
        `mailroom: ${this.#outbox.length} webhook event(s) held while the store was out of reach could not be queued before the server closed; they are lost`,
      );
    }
  }

  // --- queueing --------------------------------------------------------------

  #kept(queued: Queued, kept: readonly boolean[]): void {
    // Queued: this server looks when the first is due (another server hears of it from the store). An
    // ordered endpoint with an attempt in flight here is not: that attempt's outcome claims its next event
    // (or, when the outcome was written before this event was queued, looks again: `#behind`).
    const due = Math.min(
      ...queued.targets
        .filter((t, i) => {
          if (!kept[i]) return false;
          if (!this.#busyInOrder(t.webhookId)) return true;
          this.#behind.add(t.webhookId);
          return false;
        })
        .map((t) => t.dueAt),
    );
    if (Number.isFinite(due)) this.#wake(due);
    kept.forEach((ok, i) => {
      if (ok) return;
      const target = queued.targets[i]!;
      // The webhook was removed meanwhile: nothing is owed. Otherwise its log is full of pending events.
      const webhook = this.#o.store.get(target.webhookId);
      if (!webhook) return;
      this.#o.metrics.dropped();
      // Full of held ones, perhaps: said, though whether it is still unconfirmed is the store's to know.
      const held = waitsForConfirmation(webhook, queued.record.type) ? ` (if ${unconfirmedText(webhook)})` : '';
      this.#o.logger.warn(
        `mailroom: webhook ${target.webhookId} has its log full of pending events${held}; ${queued.record.type} ${queued.record.id} for ${queued.record.address} was dropped`,
      );
    });
  }

  #hold(queued: Queued, error?: { readonly said: unknown }): void {
    if (this.#outbox.length >= OUTBOX_MAX) {
      this.#o.metrics.dropped();
      this.#o.logger.error(
        `mailroom: the webhook store is out of reach and ${OUTBOX_MAX} events wait already; ${queued.record.type} ${queued.record.id} for ${queued.record.address} was dropped`,
      );
      return;
    }
    if (error && this.#outbox.length === 0) {
      this.#o.logger.error(`mailroom: could not queue webhook events in the store (${String(error.said)}); holding them here until it is back`);
    }
    this.#outbox.push(queued);
    this.#flushLater();
  }

  #flushLater(): void {
    if (this.#flushTimer || this.#closed) return;
    this.#flushTimer = this.#o.timers.after(RETRY_STORE_MS, () => {
      this.#flushTimer = undefined;
      void this.#flush().catch(this.#failed);
    });
  }

  /** Writes the events held here, oldest first, while the store takes them. */
  async #flush(): Promise<void> {
    if (this.#flushing || this.#outbox.length === 0) return;
    this.#flushing = true;
    let written = 0;
    try {
      while (this.#outbox.length > 0 && !this.#closed) {
        const queued = this.#outbox[0]!;
        try {
          this.#kept(queued, await this.#o.store.enqueue(queued.record, queued.targets));
        } catch {
          return this.#flushLater();
        }
        this.#outbox.shift();
        written++;
      }
      if (written > 0) this.#o.logger.warn(`mailroom: the store is back; ${written} webhook event(s) held here are queued`);
    } finally {
      this.#flushing = false;
    }
  }

  // --- claiming --------------------------------------------------------------

  /** Something may be due at `at`: look then (now, when it is already due). */
  #wake(at: number): void {
    if (this.#closed) return;
    if (at <= this.#o.timers.now()) void this.#pump().catch(this.#failed);
    else this.#arm(at);
  }

  #arm(at: number | undefined): void {
    if (this.#closed) return;
    const now = this.#o.timers.now();
    // Nothing pending that this server knows of, and no webhooks: an announcement will wake it.
    if (at === undefined && this.#o.store.size === 0 && this.#inFlight.size === 0) return;
    const when = Math.min(at ?? Infinity, now + LOOK_EVERY_MS);
    if (this.#timer && this.#timer.at <= when) return;
    this.#timer?.cancel();
    const timer = {
      at: when,
      cancel: this.#o.timers.after(when - now, () => {
        if (this.#timer === timer) this.#timer = undefined;
        void this.#pump().catch(this.#failed);
      }),
    };
    this.#timer = timer;
  }

  /** Claims what is due (as many as there is room for) and starts each attempt. */
  async #pump(): Promise<void> {
    if (this.#closed) return;
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    let next: number | undefined;
    try {
      do {
        this.#again = false;
        const room = MAX_IN_FLIGHT - this.#inFlight.size;
        // Full: each attempt that finishes looks again.
        if (room <= 0) return;
        const batch = await this.#o.store.claim(room);
        this.#pending = batch.pending;
        next = batch.nextDueAt;
        for (const claim of batch.claims) this.#start(claim);
        // Due but not given (another server's lease, a removed webhook swept): not a reason to ask again at once.
        if (batch.claims.length === 0 && next !== undefined) next = Math.max(next, this.#o.timers.now() + IDLE_RETRY_MS);
      } while (this.#again && !this.#closed);
      if (this.#storeLost) this.#o.logger.warn('mailroom: the webhook store is back; deliveries go on');
      this.#storeLost = false;
    } catch (error) {
      if (!this.#storeLost && !this.#closed) this.#o.logger.error(`mailroom: could not look for due webhook attempts: ${String(error)}; trying again`);
      this.#storeLost = true;
      next = this.#o.timers.now() + RETRY_STORE_MS;
    } finally {
      this.#pumping = false;
    }
    this.#arm(next);
  }

  #start(claim: Claim): void {
    // Closing: given back for another server (or this one's next start), never left to run out as a lost attempt.
    if (this.#closed) return void this.#o.store.release([claim]).catch(() => {});
    if (this.#wasRemoved(claim.webhookId)) return;
    // Keyed by the lease: the same event may be claimed again here before the attempt that retried it has quite finished.
    const key = claim.token;
    const entry: { readonly claim: Claim; run: Promise<void> } = { claim, run: Promise.resolve() };
    this.#inFlight.set(key, entry);
    this.#busy.set(claim.webhookId, (this.#busy.get(claim.webhookId) ?? 0) + 1);
    this.#keepLeases();
    const done = () => {
      this.#inFlight.delete(key);
      const busy = (this.#busy.get(claim.webhookId) ?? 1) - 1;
      if (busy > 0) this.#busy.set(claim.webhookId, busy);
      else this.#busy.delete(claim.webhookId);
    };
    entry.run = this.#attempt(claim).then(
      (next) => {
        done();
        const behind = this.#behind.delete(claim.webhookId);
        if (!next || (behind && !next.claims.some((c) => c.webhookId === claim.webhookId))) return void this.#pump().catch(this.#failed);
        // The outcome was written, and the endpoint's next due event, if any, claimed with it: go on with that.
        this.#pending = next.pending;
        for (const follow of next.claims) this.#start(follow);
        this.#arm(next.nextDueAt);
      },
      (error: unknown) => {
        done();
        this.#o.logger.error(`mailroom: webhook ${claim.webhookId} attempt failed unexpectedly: ${String(error)}`);
        void this.#pump().catch(this.#failed);
      },
    );
  }

  /** An ordered endpoint with an attempt in flight from here. */
  #busyInOrder(webhookId: string): boolean {
    return (this.#busy.get(webhookId) ?? 0) > 0 && this.#o.store.get(webhookId)?.ordered === true;
  }

  /** Makes the attempt, records it; the store's answer to the record (with what it claimed next), or undefined when it was not recorded. */
  async #attempt(claim: Claim): Promise<ClaimBatch | undefined> {
    const { webhook, delivery } = claim;
    const { timers, sender, metrics, random } = this.#o;
    let finished: DeliveryAttempt;
    if (claim.lost) {
      // The server that claimed this attempt before stopped before its outcome was known: that attempt counts, and it is retried.
      const why = 'the server making this attempt stopped (its lease ran out) before its outcome was known';
      finished = settle(
        delivery,
        webhook,
        { number: nextAttemptNumber(delivery), at: claim.lost.since },
        lostOutcome(claim.lost.until - claim.lost.since, why),
        timers.now(),
        random,
      );
    } else {
      const abort = this.#abortOf(webhook.id);
      const attempt = nextAttemptNumber(delivery);
      const at = timers.now();
      const signal = AbortSignal.any([abort.signal, this.#closing.signal]);
      let posted = await this.#payload(delivery).then((payload) => sender.post(attemptJob(webhook, delivery, attempt, at, payload), signal), unavailable);
      if (posted.result.kind === 'failure' && posted.result.reason === 'cancelled') {
        // Removed: nothing more is sent or recorded. Closing: the attempt was cut short, and another server retries it.
        if (!this.#closing.signal.aborted) return undefined;
        posted = lostOutcome(posted.latencyMs, 'the server closed while the attempt was in flight');
      }
      finished = settle(delivery, webhook, { number: attempt, at }, posted, timers.now(), random);
    }
    const follow = this.#closed ? 0 : Math.min(webhook.ordered ? 1 : FOLLOW_UNORDERED, MAX_IN_FLIGHT - this.#inFlight.size + 1);
    const written = await this.#complete(claim, delivery, finished, follow);
    if (!written?.saved) return undefined;
    metrics.attempted(delivery, finished);
    if (delivery.state !== 'pending') metrics.settled(delivery);
    return written.next;
  }

  /** Writes the outcome back, trying again while the store is out of reach (the lease stays this server's until another claims it). */
  async #complete(claim: Claim, delivery: Delivery, finished: DeliveryAttempt, follow: number): Promise<{ saved: boolean; next: ClaimBatch } | undefined> {
    const what = `${claim.webhookId}'s ${delivery.event.id} attempt ${finished.attempt} (${finished.reason})`;
    for (let tries = 1; ; tries++) {
      try {
        const written = await this.#o.store.completeAndClaim(claim, delivery, this.#closed ? 0 : follow);
        if (!written.saved && this.#o.store.get(claim.webhookId) && !this.#wasRemoved(claim.webhookId)) {
          this.#o.logger.warn(`mailroom: webhook ${what}: its lease ran out and another server took the event over; this outcome is not recorded`);
        }
        return written;
      } catch (error) {
        if (tries === 1) this.#o.logger.error(`mailroom: could not record webhook ${what}: ${String(error)}; trying again`);
        if (this.#closed && tries >= 3) {
          this.#o.logger.error(`mailroom: webhook ${what} is not recorded: the server closed while the store was out of reach`);
          return undefined;
        }
        await new Promise<void>((resolve) => this.#o.timers.after(RETRY_STORE_MS, resolve));
      }
    }
  }

  /** Renews the leases of the attempts in flight here, every third of a lease, while there are any. */
  #keepLeases(): void {
    if (this.#renewal) return;
    const every = Math.max(20, Math.floor(this.#o.store.leaseMs / 3));
    const tick = () => {
      if (this.#inFlight.size === 0) {
        this.#renewal = undefined;
        return;
      }
      void this.#o.store.renew([...this.#inFlight.values()].map((f) => f.claim)).catch(() => {});
      this.#renewal = this.#o.timers.after(every, tick);
    };
    this.#renewal = this.#o.timers.after(every, tick);
  }

  /** An event made here: its payload is made from the message in hand, not read back from the store. */
  #remember(event: WebhookEvent): void {
    this.#made.set(event.id, event);
    for (const oldest of this.#made.keys()) {
      if (this.#made.size <= MADE_KEPT) break;
      this.#made.delete(oldest);
    }
  }

  /**
   * The event's payload for this attempt: made afresh each time, so a
   * retry reads the message from the store again and finds it gone once it
   * expired, was evicted or deleted (`gone`); nothing of it is kept here
   * between attempts. (The delivery thread keeps the built body, bounded.)
   */
  #payload(delivery: Delivery): Promise<EventPayload> {
    const id = delivery.event.id;
    const made = this.#made.get(id);
    this.#made.delete(id);
    return (made ?? delivery.event).payload();
  }

  #abortOf(webhookId: string): AbortController {
    let abort = this.#aborts.get(webhookId);
    if (!abort) this.#aborts.set(webhookId, (abort = new AbortController()));
    return abort;
  }

  /** A webhook removed (here or through another server): its attempts in flight here are aborted. */
  #stop(webhookId: string): void {
    const now = this.#o.timers.now();
    this.#removed.set(webhookId, now);
    for (const [id, at] of this.#removed) if (now - at > REMOVED_KEPT_MS) this.#removed.delete(id);
    this.#aborts.get(webhookId)?.abort();
    this.#aborts.delete(webhookId);
  }

  #wasRemoved(webhookId: string): boolean {
    return this.#removed.has(webhookId);
  }
}
