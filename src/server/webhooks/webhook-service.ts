// The webhooks of one server, wired together: registrations kept in a
// store, events made from the SMTP intake's attempt feed (fan-out below),
// the dispatcher that delivers them, the sender's connections and the
// metrics. The HTTP API (http/webhooks/webhooks.ts) and `startServer`'s static
// registrations (`mailroom serve --webhook`) both go through `register`.
//
// The store decides the dispatcher: one kept by this server (the memory
// store, the default) is delivered by dispatcher.ts, which holds the queue;
// a shared one (Redis) by shared-dispatcher.ts, which claims due attempts
// from the store with every other server on it.
import { createHash, randomBytes } from 'node:crypto';
import type { RandomSource } from '../../contract/random.js';
import { WEBHOOK_LIMITS, type WebhookEventType } from '../../contract/webhooks.js';
import type { Logger } from '../base/log.js';
import type { AttemptFeed, SmtpAttempt } from '../base/smtp-attempts.js';
import type { StoredMessage } from '../base/stored-message.js';
import { systemTimers, WebhookDispatcher, type DispatchTimers } from './dispatcher.js';
import type { DeliverySender } from './delivery-job.js';
import { deliveryOutcome, messageReceived, type SourceReader, type WebhookEvent } from './events.js';
import { WebhookMetrics } from './metrics.js';
import { destinationPolicy } from './destination-policy.js';
import { parseWebhookInput, type Webhook } from './registration.js';
import { SharedDispatcher } from './shared-dispatcher.js';
import { ProviderEventSource, type Reported } from './provider-events/provider-event-source.js';
import { MemorySendLog } from './provider-events/send-log.js';
import { snsCertificate } from './provider-events/ses.js';
import type { ReportedProviderEvent } from '../../contract/provider-events.js';
import { hasSubscription } from './subscription.js';
import { ThreadedSender } from './threaded-sender.js';
import { isShared, MemoryWebhookStore, type AnyWebhookStore, type Delivery } from './webhook-store.js';

/** Registration refused: too many already. */
export class TooManyWebhooksError extends Error {}

export interface WebhookServiceOptions {
  /** The SMTP intake's attempts; an accepted one comes with its stored copy. */
  readonly attempts: AttemptFeed;
  /** The raw source's URL (the API's base is known once the HTTP port is bound). */
  readonly rawUrl: (message: StoredMessage) => string;
  /** Reads a message's source from the mail store when an attempt goes (undefined once the mail is gone). */
  readonly readSource: SourceReader;
  /** The mailbox key of a registration's `address`, or its refusal. */
  readonly mailboxKey: (address: string) => string;
  readonly now: () => number;
  readonly random: RandomSource;
  readonly logger: Logger;
  /** Injected in tests of the schedule; real timers otherwise. */
  readonly timers?: DispatchTimers | undefined;
  /**
   * Where webhooks may post (`--webhook-allow`, destination-policy.ts),
   * checked on the URL at registration and on the address its name
   * resolves to at each connection; default: anywhere but the cloud
   * metadata service.
   */
  readonly webhookAllow?: readonly string[] | undefined;
  /** How long a finished delivery (delivered, dead-lettered) stays in the memory store's log, ms: the mail's retention. */
  readonly logRetentionMs?: number | undefined;
  /** Where registrations and retry state live: this server's memory unless a shared store is given. */
  readonly store?: AnyWebhookStore | undefined;
  /** Where attempts are built and sent: the delivery thread unless a test says otherwise. */
  readonly sender?: DeliverySender | undefined;
  /** The API's base URL (known once the HTTP port is bound), for the links in SES's events. */
  readonly apiUrl?: (() => string) | undefined;
}

export interface WebhookService {
  /**
   * Checks and stores a registration (a TypeError names a bad field), and
   * starts delivering to it. `id`: a static webhook's (`staticWebhookId`);
   * on a shared store one already registered under it is kept and returned.
   */
  register(input: unknown, options?: { readonly id?: string }): Promise<Webhook>;
  get(id: string): Webhook | undefined;
  /** Oldest first; with `address`, only those scoped to that mailbox. */
  list(address?: string): readonly Webhook[];
  remove(id: string): Promise<Webhook | undefined>;
  /** Removes the webhooks scoped to a mailbox (it was deleted); how many. */
  removeScopedTo(address: string): Promise<number>;
  deliveries(id: string): Promise<readonly Delivery[]>;
  replay(id: string, eventId: string): Promise<Delivery | undefined>;
  /**
   * The app fetched an SES webhook's `SubscribeURL` (subscription.ts): its
   * held notifications go now, in order. The webhook, or undefined when no
   * SES webhook has that id.
   */
  confirmSubscription(id: string): Promise<Webhook | undefined>;
  /** Whether the webhook's notifications are held now: an SES webhook whose subscription is not confirmed yet. */
  unconfirmed(id: string): Promise<boolean>;
  /** A test's report for an address (its mailbox key): the last provider send to it had this fate; undefined when none was sent. */
  reportProviderEvent(address: string, kind: ReportedProviderEvent, detail: string | undefined): Promise<Reported | undefined>;
  readonly metrics: WebhookMetrics;
  close(): Promise<void>;
}

function webhookId(): string {
  return `wh_${randomBytes(12).toString('hex')}`;
}

/**
 * The id of the `index`th static webhook (`mailroom serve --webhook`): made
 * from what was given, so every server started with the same `--webhook` on
 * one shared store names the same registration (one webhook, not one per
 * server), and a restarted server finds its own.
 */
export function staticWebhookId(
  given: { readonly url: string; readonly secret?: string | undefined; readonly events?: readonly string[] | undefined; readonly format?: string | undefined },
  index: number,
): string {
  // A format other than mailroom's is part of what was given (mailroom's is left out, so the ids made before formats stay).
  const format = given.format === undefined || given.format === 'mailroom' ? [] : [given.format];
  const made = createHash('sha256').update(JSON.stringify([given.url, given.secret ?? null, given.events ?? null, index, ...format]));
  return `wh_${made.digest('hex').slice(0, 24)}`;
}

const typeOf = (attempt: SmtpAttempt): WebhookEventType | undefined =>
  attempt.outcome === 'accepted'
    ? 'message.received'
    : attempt.outcome === 'deferred'
      ? 'delivery.deferred'
      : attempt.outcome === 'rejected'
        ? 'delivery.rejected'
        : undefined;

// Over 80 lines on purpose: the service's methods are thin, each a few
// lines over the one registration index and dispatcher made at its top.
export function createWebhookService(options: WebhookServiceOptions): WebhookService {
  const destinations = destinationPolicy(options.webhookAllow ?? []);
  const store = options.store ?? new MemoryWebhookStore({ now: options.now, retentionMs: options.logRetentionMs });
  const sender = options.sender ?? new ThreadedSender({ webhookAllow: options.webhookAllow ?? [] });
  const timers = options.timers ?? systemTimers(options.now);
  const common = { sender, timers, random: options.random, logger: options.logger };
  let pending: () => number | Promise<number> = () => 0;
  const metrics = new WebhookMetrics(() => pending());
  let fanOut: (subscribers: readonly Webhook[], event: WebhookEvent) => void;
  let dispatcher: {
    add(webhook: Webhook): Promise<Webhook>;
    remove(id: string): Promise<Webhook | undefined>;
    replay(id: string, eventId: string): Promise<Delivery | undefined>;
    confirm(id: string): boolean | Promise<boolean>;
    close(): void | Promise<void>;
  };
  if (isShared(store)) {
    const shared = new SharedDispatcher({ ...common, store, metrics });
    pending = () => shared.pendingNow();
    fanOut = (subscribers, event) => shared.enqueue(subscribers, event);
    dispatcher = shared;
  } else {
    const local = new WebhookDispatcher({ ...common, store, metrics });
    pending = () => local.pending;
    fanOut = (subscribers, event) => {
      for (const webhook of subscribers) local.enqueue(webhook, event);
    };
    dispatcher = {
      add: async (webhook) => {
        await local.add(webhook);
        return webhook;
      },
      remove: (id) => local.remove(id),
      replay: (id, eventId) => local.replay(id, eventId),
      confirm: (id) => local.confirm(id),
      close: () => local.close(),
    };
  }

  const providerEvents = new ProviderEventSource({
    attempts: options.attempts,
    subscribers: (type, address) => (store.size === 0 ? [] : store.subscribers(type, address)),
    fanOut: (subscribers, event) => fanOut(subscribers, event),
    // Beside a shared store, in it: a report may reach any server, whichever took the send.
    log: isShared(store) ? store : new MemorySendLog(),
    logger: options.logger,
    now: options.now,
    apiUrl: options.apiUrl ?? (() => 'http://127.0.0.1'),
  });

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
      event = messageReceived(message, options.rawUrl, options.readSource);
    } else {
      if (attempt.code === undefined) return;
      event = deliveryOutcome({ ...attempt, code: attempt.code });
    }
    fanOut(subscribers, event);
  });

  return {
    async register(input, given) {
      if (store.size >= WEBHOOK_LIMITS.maxWebhooks) {
        throw new TooManyWebhooksError(`This server holds ${WEBHOOK_LIMITS.maxWebhooks} webhooks already; remove some first (DELETE /api/v1/webhooks/{id})`);
      }
      const webhook = parseWebhookInput(input, { id: given?.id ?? webhookId(), now: options.now(), mailboxKey: options.mailboxKey });
      const refused = destinations.refusal(webhook.url);
      if (refused) throw new TypeError(`Webhook \`url\` refused: ${refused}`);
      // SNS signs with this server's certificate: made before a first event needs it.
      if (webhook.format === 'ses') await snsCertificate();
      const stored = await dispatcher.add(webhook);
      sender.warm?.();
      if (stored === webhook) providerEvents.registered(stored);
      return stored;
    },
    get: (id) => store.get(id),
    list: (address) => (address === undefined ? store.list() : store.scopedTo(address)),
    remove: (id) => dispatcher.remove(id),
    async removeScopedTo(address) {
      const scoped = [...store.scopedTo(address)];
      await Promise.all(scoped.map((webhook) => dispatcher.remove(webhook.id)));
      return scoped.length;
    },
    deliveries: async (id) => store.deliveries(id),
    replay: (id, eventId) => dispatcher.replay(id, eventId),
    async confirmSubscription(id) {
      const webhook = store.get(id);
      if (!webhook || !hasSubscription(webhook)) return undefined;
      await dispatcher.confirm(id);
      return webhook;
    },
    async unconfirmed(id) {
      const webhook = store.get(id);
      return webhook !== undefined && hasSubscription(webhook) && (await store.confirmedAt(id)) === undefined;
    },
    reportProviderEvent: (address, kind, detail) => providerEvents.report(address, kind, detail),
    metrics,
    async close() {
      unsubscribe();
      providerEvents.close();
      await dispatcher.close();
      await sender.close();
      if (isShared(store)) await store.close();
    },
  };
}
