// Where webhooks and their retry state live, behind a small interface: the
// registrations, and for each one every event it was sent with its
// attempts, its state and when the next attempt is due. The dispatcher
// (dispatcher.ts) decides; the store only keeps. This memory store is the
// only one so far; a Redis store (its own issue) would keep the same
// records so retries survive a restart: everything here is plain data
// except an event's payload (events.ts), which such a store would keep as
// the message's mailbox and id (or a delivery outcome's fields) and make
// again when read back.
//
// Like the mail store's boundary (store/mail-store.ts), the methods that
// write, and those that read the delivery log, return `Awaitable` values:
// the memory store answers synchronously, a shared store with promises, and
// every caller awaits. The registrations are read synchronously (`size`,
// `get`, `list`, `scopedTo`, `subscribers`): `subscribers` is asked on the
// SMTP path of every mail, so a shared store keeps them in memory as well,
// written through to its backing service.
import type { WebhookAttemptOutcome, WebhookDeliveryState, WebhookEventType } from '../../contract/webhooks.js';
import type { Awaitable } from '../store/mail-store.js';
import type { WebhookEvent } from './events.js';
import type { Webhook } from './registration.js';

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

export interface WebhookStore {
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
}

/** Deliveries kept per webhook; past it the oldest finished ones go. */
export const MAX_DELIVERIES_PER_WEBHOOK = 10_000;

const NONE: readonly Webhook[] = Object.freeze([]);

export class MemoryWebhookStore implements WebhookStore {
  readonly #webhooks = new Map<string, Webhook>();
  /** Registrations for every address, and those scoped to one, for subscribers(). */
  #everywhere: readonly Webhook[] = NONE;
  readonly #byAddress = new Map<string, readonly Webhook[]>();
  readonly #deliveries = new Map<string, Map<string, Delivery>>();
  /** Per webhook, the ids of its finished deliveries in the order they finished: the first to go when its log is full. */
  readonly #finished = new Map<string, string[]>();
  readonly #maxPerWebhook: number;

  constructor(options: { readonly maxDeliveriesPerWebhook?: number } = {}) {
    this.#maxPerWebhook = options.maxDeliveriesPerWebhook ?? MAX_DELIVERIES_PER_WEBHOOK;
  }

  get size(): number {
    return this.#webhooks.size;
  }

  add(webhook: Webhook): void {
    this.#webhooks.set(webhook.id, webhook);
    this.#deliveries.set(webhook.id, new Map());
    this.#finished.set(webhook.id, []);
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
    this.#deliveries.delete(id);
    this.#finished.delete(id);
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

  enqueue(delivery: Delivery): boolean {
    const kept = this.#deliveries.get(delivery.webhookId);
    if (!kept) return false;
    if (kept.size >= this.#maxPerWebhook) {
      // The delivery that finished first goes; pending ones are never dropped for a newer event.
      const finished = this.#finished.get(delivery.webhookId) ?? [];
      let dropped = false;
      while (!dropped && finished.length > 0) {
        const id = finished.shift()!;
        // A replayed one is pending again (its id comes back here when it finishes anew).
        if (kept.get(id)?.state !== 'pending') dropped = kept.delete(id);
      }
      if (!dropped) return false;
    }
    kept.set(delivery.event.id, delivery);
    return true;
  }

  deliveries(webhookId: string): readonly Delivery[] {
    return [...(this.#deliveries.get(webhookId)?.values() ?? [])];
  }

  delivery(webhookId: string, eventId: string): Delivery | undefined {
    return this.#deliveries.get(webhookId)?.get(eventId);
  }

  saved(delivery: Delivery): void {
    // The memory store holds the dispatcher's own objects: nothing to write back, only the order deliveries finished in.
    if (delivery.state !== 'pending') this.#finished.get(delivery.webhookId)?.push(delivery.event.id);
  }
}
