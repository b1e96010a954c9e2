// Where webhooks and their retry state live, behind a small interface: the
// registrations, and for each one every event it was sent with its
// attempts, its state and when the next attempt is due. Two kinds:
//
// - `WebhookStore`, kept by one server: the dispatcher (dispatcher.ts) holds
//   the queue and the timers and decides; the store only keeps. The memory
//   store below is the default.
// - `SharedWebhookStore`, kept where several servers read it (the Redis
//   store, redis/redis-webhook-store.ts): the store also holds each
//   endpoint's queue, with each pending event's next-attempt time, and
//   hands out due attempts by lease, so each attempt is made by exactly one
//   server (shared-dispatcher.ts). Events and deliveries are plain data
//   there (`EventRecord`, `DeliveryRecord`).
//
// Like the mail store's boundary (store/mail-store.ts), the methods that
// write, and those that read the delivery log, return `Awaitable` values:
// the memory store answers synchronously, a shared store with promises, and
// every caller awaits. The registrations are read synchronously (`size`,
// `get`, `list`, `scopedTo`, `subscribers`): `subscribers` is asked on the
// SMTP path of every mail, so a shared store keeps them in memory as well
// (a `RegistrationIndex`), written through to its backing service and told
// of changes made through other servers.
import type { WebhookAttemptOutcome, WebhookDeliveryState, WebhookEventType } from '../../contract/webhooks.js';
import type { Awaitable } from '../base/awaitable.js';
import type { EventRecord, WebhookEvent } from './events.js';
import type { Webhook } from './registration.js';
import type { ProviderSendLog } from './provider-events/send-log.js';

export interface DeliveryAttempt {
  /** 1 for a copy's first attempt; a replay goes on counting. */
  readonly attempt: number;
  /** Which copy of the event (`duplicates`), 1-based. */
  readonly copy: number;
  /** Wall-clock ms when the request went out. */
  readonly at: number;
  readonly status: number | undefined;
  readonly latencyMs: number;
  readonly outcome: WebhookAttemptOutcome;
  readonly reason: string;
  /** For `retrying`: the wait before the next attempt, ms. */
  readonly nextDelayMs: number | undefined;
}

/** One event on its way to one endpoint. */
export interface Delivery {
  readonly webhookId: string;
  readonly event: WebhookEvent;
  state: WebhookDeliveryState;
  readonly attempts: DeliveryAttempt[];
  /** The copy being sent, 1..duplicates. */
  copy: number;
  /** Attempts of the current copy since it was queued or replayed: the retry cap counts these. */
  cycleAttempts: number;
  /** Wall-clock ms when the next attempt is due, while pending. */
  nextAttemptAt: number | undefined;
  deadAt: number | undefined;
  /** The start of the body that was sent, for a dead letter. */
  excerpt: string | undefined;
}

/** The registrations as every store answers them: synchronously, from memory. */
export interface WebhookRegistrations {
  /** Registrations held. */
  readonly size: number;
  get(id: string): Webhook | undefined;
  /** Oldest first. */
  list(): readonly Webhook[];
  /** The registrations scoped to `address`. */
  scopedTo(address: string): readonly Webhook[];
  /**
   * The registrations that want `type` at `address`. Asked for every SMTP
   * outcome while any registration exists, so it must be cheap.
   */
  subscribers(type: WebhookEventType, address: string): readonly Webhook[];
}

export interface WebhookStore {
  readonly kind?: 'local';
  /** Registrations held. */
  readonly size: number;
  add(webhook: Webhook): Awaitable<void>;
  get(id: string): Webhook | undefined;
  /** Oldest first. */
  list(): readonly Webhook[];
  /** Forgets the registration and its deliveries; returns it, or undefined when there was none. */
  remove(id: string): Awaitable<Webhook | undefined>;
  /** The registrations scoped to `address`. */
  scopedTo(address: string): readonly Webhook[];
  /**
   * The registrations that want `type` at `address`. Asked for every SMTP
   * outcome while any registration exists, so it must be cheap.
   */
  subscribers(type: WebhookEventType, address: string): readonly Webhook[];
  /** Keeps a new delivery; false when the webhook's log is full of pending ones (the event is dropped). */
  enqueue(delivery: Delivery): Awaitable<boolean>;
  /** Every delivery of the webhook still kept, oldest first. */
  deliveries(webhookId: string): Awaitable<readonly Delivery[]>;
  delivery(webhookId: string, eventId: string): Awaitable<Delivery | undefined>;
  /** The dispatcher changed `delivery`: a durable store writes it back (the memory store holds the object itself). */
  saved(delivery: Delivery): Awaitable<void>;
  /** The webhook's subscription was confirmed (subscription.ts): true the first time, false when already confirmed or there is no such webhook. */
  confirm(webhookId: string): boolean;
  /** When its subscription was confirmed, wall-clock ms; undefined while it is not. */
  confirmedAt(webhookId: string): number | undefined;
}

/** A delivery as plain data, as a shared store keeps it (`Delivery` with its event as an `EventRecord`). */
export interface DeliveryRecord {
  readonly event: EventRecord;
  readonly state: WebhookDeliveryState;
  readonly attempts: readonly DeliveryAttempt[];
  readonly copy: number;
  readonly cycleAttempts: number;
  readonly nextAttemptAt?: number | undefined;
  readonly deadAt?: number | undefined;
  readonly excerpt?: string | undefined;
}

export function toDeliveryRecord(delivery: Delivery): DeliveryRecord {
  const { event, state, attempts, copy, cycleAttempts, nextAttemptAt, deadAt, excerpt } = delivery;
  return { event: event.record(), state, attempts, copy, cycleAttempts, nextAttemptAt, deadAt, excerpt };
}

/** The dispatcher's working copy of a record; `event` is the event made from its record. */
export function fromDeliveryRecord(webhookId: string, record: DeliveryRecord, event: WebhookEvent): Delivery {
  return {
    webhookId,
    event,
    state: record.state,
    attempts: [...record.attempts],
    copy: record.copy,
    cycleAttempts: record.cycleAttempts,
    nextAttemptAt: record.nextAttemptAt ?? undefined,
    deadAt: record.deadAt ?? undefined,
    excerpt: record.excerpt ?? undefined,
  };
}

/**
 * One due attempt handed to one server: until it reports the outcome
 * (`complete`) or its lease runs out, no other server is given the event.
 */
export interface Claim {
  readonly webhookId: string;
  /** The registration as the store holds it (this server's copy may not have heard of it yet). */
  readonly webhook: Webhook;
  readonly delivery: Delivery;
  /** Names this lease; `complete` and `renew` are refused once the event was handed to another server. */
  readonly token: string;
  /**
   * The lease before this one, when it ran out without an outcome: the
   * server making that attempt stopped (killed). The attempt it was making
   * is recorded as `lost` before any other.
   */
  readonly lost: { readonly since: number; readonly until: number } | undefined;
}

export interface ClaimBatch {
  readonly claims: readonly Claim[];
  /** When the next attempt of any webhook is due (or a lease runs out); undefined when nothing is pending. */
  readonly nextDueAt: number | undefined;
  /** Events pending, over every webhook and every server. */
  readonly pending: number;
}

/**
 * A store several servers share: it keeps the registrations, each
 * endpoint's queue of pending events, the delivery log and the dead
 * letters, and hands out due attempts by lease.
 */
export interface SharedWebhookStore extends WebhookRegistrations, ProviderSendLog {
  readonly kind: 'shared';
  /** How long a claimed attempt stays this server's without a renewal, ms. */
  readonly leaseMs: number;
  /**
   * Stores a registration and returns it, the object given; one with this
   * id already there is kept, and returned (a static webhook given to
   * several servers).
   */
  add(webhook: Webhook): Promise<Webhook>;
  /** Forgets the registration and its deliveries, for every server; returns it, or undefined when there was none. */
  remove(id: string): Promise<Webhook | undefined>;
  /**
   * Queues `event` for each webhook, due at its `dueAt`; for each, false
   * when it was not kept (the webhook is gone, or its log is full of
   * pending events). Rejects when the store cannot be reached.
   */
  enqueue(event: EventRecord, targets: readonly { readonly webhookId: string; readonly dueAt: number }[]): Promise<boolean[]>;
  /** Hands this server up to `limit` due attempts, each under a lease. */
  claim(limit: number): Promise<ClaimBatch>;
  /** Extends the leases of attempts still in flight here. */
  renew(claims: readonly Claim[]): Promise<void>;
  /** Gives claims back unattempted (the server is closing): due again at once, for any server. */
  release(claims: readonly Claim[]): Promise<void>;
  /** Writes the claimed delivery back and ends the lease; false when the lease was lost (another server has the event) or the webhook is gone. */
  complete(claim: Claim, delivery: Delivery): Promise<boolean>;
  /**
   * `complete`, and in the same step claims up to `limit` of the same
   * webhook's events that are due now (an ordered endpoint's next event goes
   * on from this server without a round trip); `next` says when the next
   * attempt of all is due, as `claim` does.
   */
  completeAndClaim(claim: Claim, delivery: Delivery, limit: number): Promise<{ readonly saved: boolean; readonly next: ClaimBatch }>;
  /** Queues a dead letter again with a fresh budget of attempts; undefined when there is no such dead letter. */
  replay(webhookId: string, eventId: string): Promise<Delivery | undefined>;
  deliveries(webhookId: string): Promise<readonly Delivery[]>;
  delivery(webhookId: string, eventId: string): Promise<Delivery | undefined>;
  /** Events pending over every webhook. */
  pendingCount(): Promise<number>;
  /**
   * The webhook's subscription was confirmed (subscription.ts): its held
   * events are due now, for every server; true the first time, false when
   * already confirmed or there is no such webhook.
   */
  confirm(webhookId: string): Promise<boolean>;
  /** When its subscription was confirmed, wall-clock ms; undefined while it is not. */
  confirmedAt(webhookId: string): Promise<number | undefined>;
  /** Told when an attempt may be due at `at` (an event queued, retried or replayed through another server: a server looks by itself after its own). */
  onDue(listener: (at: number) => void): () => void;
  /** Told when a webhook was removed, through any server. */
  onRemoved(listener: (id: string) => void): () => void;
  /** Told when the store is reachable again after a break (what was announced meanwhile was missed). */
  onReconnect(listener: () => void): () => void;
  /** Stops listening (the connection itself belongs to the mail store). */
  close(): Promise<void>;
}

export type AnyWebhookStore = WebhookStore | SharedWebhookStore;

export const isShared = (store: AnyWebhookStore): store is SharedWebhookStore => store.kind === 'shared';

/** Deliveries kept per webhook; past it the oldest finished ones go. */
export const MAX_DELIVERIES_PER_WEBHOOK = 10_000;

const NONE: readonly Webhook[] = Object.freeze([]);

/**
 * The registrations in memory, indexed for `subscribers()`: every address,
 * and by the one address a registration is scoped to. The memory store's
 * own, and a shared store's copy.
 */
export class RegistrationIndex implements WebhookRegistrations {
  readonly #webhooks = new Map<string, Webhook>();
  /** Registrations for every address, and those scoped to one, for subscribers(). */
  #everywhere: readonly Webhook[] = NONE;
  readonly #byAddress = new Map<string, readonly Webhook[]>();

  get size(): number {
    return this.#webhooks.size;
  }

  add(webhook: Webhook): void {
    if (this.#webhooks.has(webhook.id)) this.remove(webhook.id);
    this.#webhooks.set(webhook.id, webhook);
    if (webhook.address === undefined) this.#everywhere = [...this.#everywhere, webhook];
    else this.#byAddress.set(webhook.address, [...(this.#byAddress.get(webhook.address) ?? NONE), webhook]);
  }

  get(id: string): Webhook | undefined {
    return this.#webhooks.get(id);
  }

  list(): readonly Webhook[] {
    return [...this.#webhooks.values()];
  }

  remove(id: string): Webhook | undefined {
    const webhook = this.#webhooks.get(id);
    if (!webhook) return undefined;
    this.#webhooks.delete(id);
    if (webhook.address === undefined) this.#everywhere = this.#everywhere.filter((w) => w !== webhook);
    else {
      const left = (this.#byAddress.get(webhook.address) ?? NONE).filter((w) => w !== webhook);
      if (left.length === 0) this.#byAddress.delete(webhook.address);
      else this.#byAddress.set(webhook.address, left);
    }
    return webhook;
  }

  scopedTo(address: string): readonly Webhook[] {
    return this.#byAddress.get(address) ?? NONE;
  }

  subscribers(type: WebhookEventType, address: string): readonly Webhook[] {
    const scoped = this.#byAddress.get(address);
    if (scoped === undefined && this.#everywhere.length === 0) return NONE;
    const out: Webhook[] = [];
    for (const webhook of this.#everywhere) if (webhook.events.includes(type)) out.push(webhook);
    if (scoped) for (const webhook of scoped) if (webhook.events.includes(type)) out.push(webhook);
    return out;
  }
}

/**
 * A webhook's finished deliveries in the order they finished, and when:
 * ids and times in two arrays (no object kept per delivery), taken from the
 * front by an index rather than `shift()`, which moves every element of a
 * long array (a full log's 10,000) on each call. The taken slots are
 * dropped once they are half the arrays, so memory stays within twice what
 * is held.
 */
class FinishOrder {
  #ids: string[] = [];
  #at: number[] = [];
  #head = 0;

  get length(): number {
    return this.#ids.length - this.#head;
  }

  push(id: string, at: number): void {
    this.#ids.push(id);
    this.#at.push(at);
  }

  /** When the first one finished; only while `length > 0`. */
  firstAt(): number {
    return this.#at[this.#head]!;
  }

  /** Takes the first one's id; only while `length > 0`. */
  shift(): string {
    const id = this.#ids[this.#head]!;
    this.#ids[this.#head] = '';
    this.#head++;
    if (this.#head === this.#ids.length) {
      this.#ids = [];
      this.#at = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#ids.length) {
      this.#ids = this.#ids.slice(this.#head);
      this.#at = this.#at.slice(this.#head);
      this.#head = 0;
    }
    return id;
  }
}

export class MemoryWebhookStore implements WebhookStore {
  readonly #registrations = new RegistrationIndex();
  readonly #deliveries = new Map<string, Map<string, Delivery>>();
  /**
   * Per webhook, its finished deliveries in the order they finished (and
   * when): the first to go when its log is full, and gone anyway once
   * older than the log's retention.
   */
  readonly #finished = new Map<string, FinishOrder>();
  /** Per webhook, when its subscription was confirmed (subscription.ts). */
  readonly #confirmed = new Map<string, number>();
  readonly #maxPerWebhook: number;
  readonly #now: () => number;
  readonly #retentionMs: number;

  constructor(options: { readonly maxDeliveriesPerWebhook?: number; readonly now?: () => number; readonly retentionMs?: number } = {}) {
    this.#maxPerWebhook = options.maxDeliveriesPerWebhook ?? MAX_DELIVERIES_PER_WEBHOOK;
    this.#now = options.now ?? (() => Date.now());
    this.#retentionMs = options.retentionMs ?? Infinity;
  }

  /** Forgets the webhook's finished deliveries (delivered, dead letters) older than the retention: a log bounded in time. */
  #expire(webhookId: string): void {
    const finished = this.#finished.get(webhookId);
    const kept = this.#deliveries.get(webhookId);
    if (!finished || !kept || finished.length === 0) return;
    const cutoff = this.#now() - this.#retentionMs;
    while (finished.length > 0 && finished.firstAt() <= cutoff) {
      const id = finished.shift();
      if (kept.get(id)?.state !== 'pending') kept.delete(id);
    }
  }

  get size(): number {
    return this.#registrations.size;
  }

  add(webhook: Webhook): void {
    this.#registrations.add(webhook);
    this.#deliveries.set(webhook.id, new Map());
    this.#finished.set(webhook.id, new FinishOrder());
  }

  get(id: string): Webhook | undefined {
    return this.#registrations.get(id);
  }

  list(): readonly Webhook[] {
    return this.#registrations.list();
  }

  remove(id: string): Webhook | undefined {
    const webhook = this.#registrations.remove(id);
    if (!webhook) return undefined;
    this.#deliveries.delete(id);
    this.#finished.delete(id);
    this.#confirmed.delete(id);
    return webhook;
  }

  scopedTo(address: string): readonly Webhook[] {
    return this.#registrations.scopedTo(address);
  }

  subscribers(type: WebhookEventType, address: string): readonly Webhook[] {
    return this.#registrations.subscribers(type, address);
  }

  enqueue(delivery: Delivery): boolean {
    const kept = this.#deliveries.get(delivery.webhookId);
    if (!kept) return false;
    this.#expire(delivery.webhookId);
    if (kept.size >= this.#maxPerWebhook) {
      // The delivery that finished first goes; pending ones are never dropped for a newer event.
      const finished = this.#finished.get(delivery.webhookId);
      let dropped = false;
      while (!dropped && finished && finished.length > 0) {
        const id = finished.shift();
        // A replayed one is pending again (its id comes back here when it finishes anew).
        if (kept.get(id)?.state !== 'pending') dropped = kept.delete(id);
      }
      if (!dropped) return false;
    }
    kept.set(delivery.event.id, delivery);
    return true;
  }

  deliveries(webhookId: string): readonly Delivery[] {
    this.#expire(webhookId);
    return [...(this.#deliveries.get(webhookId)?.values() ?? [])];
  }

  delivery(webhookId: string, eventId: string): Delivery | undefined {
    this.#expire(webhookId);
    return this.#deliveries.get(webhookId)?.get(eventId);
  }

  saved(delivery: Delivery): void {
    // The memory store holds the dispatcher's own objects: nothing to write back, only the order deliveries finished in.
    if (delivery.state !== 'pending') this.#finished.get(delivery.webhookId)?.push(delivery.event.id, this.#now());
  }

  confirm(webhookId: string): boolean {
    if (!this.#registrations.get(webhookId) || this.#confirmed.has(webhookId)) return false;
    this.#confirmed.set(webhookId, this.#now());
    return true;
  }

  confirmedAt(webhookId: string): number | undefined {
    return this.#confirmed.get(webhookId);
  }
}
