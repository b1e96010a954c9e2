// The webhooks of one server, wired together: registrations kept in a
// store, events made from the SMTP intake's attempt feed (fan-out below),
// the dispatcher that delivers them, the sender's connections and the
// metrics. The HTTP API (http/webhooks.ts) and `startServer`'s static
// registrations (`mailroom serve --webhook`) both go through `register`.
import { randomBytes } from 'node:crypto';
import type { RandomSource } from '../../contract/random.js';
import { WEBHOOK_LIMITS, type WebhookEventType } from '../../contract/webhooks.js';
import type { Logger } from '../log.js';
import type { AttemptFeed, SmtpAttempt } from '../smtp/attempts.js';
import type { StoredMessage } from '../store/mail-store.js';
import { systemTimers, WebhookDispatcher, type DispatchTimers } from './dispatcher.js';
import type { DeliverySender } from './delivery-job.js';
import { deliveryOutcome, messageReceived } from './events.js';
import { WebhookMetrics } from './metrics.js';
import { parseWebhookInput, type Webhook } from './registration.js';
import { ThreadedSender } from './threaded-sender.js';
import { MemoryWebhookStore, type Delivery, type WebhookStore } from './webhook-store.js';

/** Registration refused: too many already. */
export class TooManyWebhooksError extends Error {}

export interface WebhookServiceOptions {
  /** The SMTP intake's attempts; an accepted one comes with its stored copy. */
  readonly attempts: AttemptFeed;
  /** The raw source's URL (the API's base is known once the HTTP port is bound). */
  readonly rawUrl: (message: StoredMessage) => string;
  /** The mailbox key of a registration's `address`, or its refusal. */
  readonly mailboxKey: (address: string) => string;
  readonly now: () => number;
  readonly random: RandomSource;
  readonly logger: Logger;
  /** Injected in tests of the schedule; real timers otherwise. */
  readonly timers?: DispatchTimers | undefined;
  readonly store?: WebhookStore | undefined;
  /** Where attempts are built and sent: the delivery thread unless a test says otherwise. */
  readonly sender?: DeliverySender | undefined;
}

export interface WebhookService {
  /** Checks and stores a registration (a TypeError names a bad field), and starts delivering to it. */
  register(input: unknown): Promise<Webhook>;
  get(id: string): Webhook | undefined;
  /** Oldest first; with `address`, only those scoped to that mailbox. */
  list(address?: string): readonly Webhook[];
  remove(id: string): Promise<Webhook | undefined>;
  /** Removes the webhooks scoped to a mailbox (it was deleted); how many. */
  removeScopedTo(address: string): Promise<number>;
  deliveries(id: string): Promise<readonly Delivery[]>;
  replay(id: string, eventId: string): Promise<Delivery | undefined>;
  readonly metrics: WebhookMetrics;
  close(): Promise<void>;
}

function webhookId(): string {
  return `wh_${randomBytes(12).toString('hex')}`;
}

const typeOf = (attempt: SmtpAttempt): WebhookEventType | undefined =>
  attempt.outcome === 'accepted'
    ? 'message.received'
    : attempt.outcome === 'deferred'
      ? 'delivery.deferred'
      : attempt.outcome === 'rejected'
        ? 'delivery.rejected'
        : undefined;

export function createWebhookService(options: WebhookServiceOptions): WebhookService {
  const store = options.store ?? new MemoryWebhookStore();
  const sender = options.sender ?? new ThreadedSender();
  let dispatcher: WebhookDispatcher | undefined = undefined;
  const metrics = new WebhookMetrics(() => dispatcher?.pending ?? 0);
  dispatcher = new WebhookDispatcher({
    store,
    sender,
    timers: options.timers ?? systemTimers(options.now),
    random: options.random,
    metrics,
    logger: options.logger,
  });
  const working = dispatcher;

  // The fan-out, on the SMTP path of every mail: with no registration it
  // costs one comparison; with some, a lookup and, per subscriber, a queued
  // reference. Nothing is parsed or serialised here, nor in this thread (events.ts).
  const unsubscribe = options.attempts.subscribe((attempt, message) => {
    if (store.size === 0) return;
    const type = typeOf(attempt);
    if (type === undefined) return;
    const subscribers = store.subscribers(type, attempt.to);
    if (subscribers.length === 0) return;
    let event;
    if (type === 'message.received') {
      if (!message) return;
      event = messageReceived(message, options.rawUrl);
    } else {
      if (attempt.code === undefined) return;
      event = deliveryOutcome({ ...attempt, code: attempt.code });
    }
    for (const webhook of subscribers) working.enqueue(webhook, event);
  });

  return {
    async register(input) {
      if (store.size >= WEBHOOK_LIMITS.maxWebhooks) {
        throw new TooManyWebhooksError(`This server holds ${WEBHOOK_LIMITS.maxWebhooks} webhooks already; remove some first (DELETE /api/v1/webhooks/{id})`);
      }
      const webhook = parseWebhookInput(input, { id: webhookId(), now: options.now(), mailboxKey: options.mailboxKey });
      await working.add(webhook);
      sender.warm?.();
      return webhook;
    },
    get: (id) => store.get(id),
    list: (address) => (address === undefined ? store.list() : store.scopedTo(address)),
    remove: (id) => working.remove(id),
    async removeScopedTo(address) {
      const scoped = [...store.scopedTo(address)];
      await Promise.all(scoped.map((webhook) => working.remove(webhook.id)));
      return scoped.length;
    },
    deliveries: async (id) => store.deliveries(id),
    replay: (id, eventId) => working.replay(id, eventId),
    metrics,
    async close() {
      unsubscribe();
      working.close();
      await sender.close();
    },
  };
}
