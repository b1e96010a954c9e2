// Webhooks as the client returns them (an embedded-server extension,
// docs/CONTRACT.md "Webhooks"): camel-cased, times as `Date`, durations in
// ms - and the wire checked at the edge (zod), as for every other answer.
import { z } from 'zod';
import { Timestamp } from './wire-schemas.js';
import { ALL_WEBHOOK_EVENT_TYPES, type WebhookAttemptOutcome, type WebhookDeliveryState, type WebhookEventType } from '../contract/webhooks.js';
import { REPORTABLE_PROVIDER_EVENTS, WEBHOOK_FORMATS, type ReportedProviderEvent, type WebhookFormat } from '../contract/provider-events.js';
import { PROVIDER_NAMES, type ProviderName } from '../contract/providers.js';

export type { WebhookAttemptOutcome, WebhookDeliveryState, WebhookEventType } from '../contract/webhooks.js';

export interface WebhookRetry {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly factor: number;
  readonly maxDelayMs: number;
}

/** A registration as the service stored it: every field filled in. */
export interface WebhookRegistration {
  readonly id: string;
  readonly url: string;
  /** Signs every attempt: give it to `verifyWebhookSignature` in the handler. */
  readonly secret: string;
  readonly events: readonly WebhookEventType[];
  /** The address it is scoped to, or null for every address. */
  readonly address: string | null;
  readonly retry: WebhookRetry;
  readonly timeoutMs: number;
  readonly ordered: boolean;
  readonly duplicates: number;
  readonly outOfOrder: boolean;
  readonly firstAttemptDelayMs: number;
  readonly createdAt: Date;
  /** How its events are shaped and signed: `mailroom`, or a provider's (docs/providers.md, "Delivery events"). */
  readonly format: WebhookFormat;
  /** A `sendgrid` webhook's public key (base64 DER): what the app verifies the Signed Event Webhook with. */
  readonly publicKey?: string;
}

/** One attempt of one event at the endpoint. */
export interface WebhookAttempt {
  /** 1 for a copy's first attempt; a replay goes on counting. */
  readonly attempt: number;
  /** When the request went out. */
  readonly at: Date;
  /** The answer's status; null when there was none (timeout, refused, reset). */
  readonly status: number | null;
  readonly latencyMs: number;
  readonly outcome: WebhookAttemptOutcome;
  /** One word: the status (`503`), or `timeout`, `refused`, `reset`, `network`, `signature`, `4xx-not-retried`, `cancelled`. */
  readonly reason: string;
  /** For `retrying`: the wait chosen before the next attempt. */
  readonly nextDelayMs: number | null;
  /** Which copy of the event (`duplicates`), 1-based. */
  readonly copy: number;
}

/** One event on its way to the endpoint, with every attempt so far. */
export interface WebhookDelivery {
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  readonly address: string;
  readonly createdAt: Date;
  readonly state: WebhookDeliveryState;
  readonly nextAttemptAt: Date | null;
  readonly attempts: readonly WebhookAttempt[];
  /**
   * Set while the event waits, unattempted, for something other than its
   * time: `subscription_unconfirmed`, an SES webhook's notification held
   * until the app fetches the `SubscribeURL` of its `SubscriptionConfirmation`.
   */
  readonly held?: 'subscription_unconfirmed';
}

export interface WebhookDeadLetter {
  readonly eventId: string;
  readonly eventType: WebhookEventType;
  readonly address: string;
  readonly deadAt: Date;
  /** The last attempt's reason: the error category. */
  readonly reason: string;
  /** The start of the body that could not be delivered. */
  readonly payloadExcerpt: string;
  readonly attempts: readonly WebhookAttempt[];
}

const EventType = z.enum(ALL_WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]);
const Whole = z.number().int().min(0);

const Registration = z
  .object({
    id: z.string(),
    url: z.string(),
    secret: z.string(),
    events: z.array(EventType),
    address: z.string().nullable(),
    retry: z.object({ max_attempts: Whole, initial_delay_ms: Whole, factor: z.number(), max_delay_ms: Whole }),
    timeout_ms: Whole,
    ordered: z.boolean(),
    duplicates: Whole,
    out_of_order: z.boolean(),
    first_attempt_delay_ms: Whole,
    created_at: Timestamp,
    // Absent from a server older than the provider formats: its webhooks are all mailroom's.
    format: z.enum(WEBHOOK_FORMATS as [WebhookFormat, ...WebhookFormat[]]).default('mailroom'),
    public_key: z.string().optional(),
  })
  .transform((w): WebhookRegistration =>
    Object.freeze({
      id: w.id,
      url: w.url,
      secret: w.secret,
      events: Object.freeze(w.events),
      address: w.address,
      retry: Object.freeze({
        maxAttempts: w.retry.max_attempts,
        initialDelayMs: w.retry.initial_delay_ms,
        factor: w.retry.factor,
        maxDelayMs: w.retry.max_delay_ms,
      }),
      timeoutMs: w.timeout_ms,
      ordered: w.ordered,
      duplicates: w.duplicates,
      outOfOrder: w.out_of_order,
      firstAttemptDelayMs: w.first_attempt_delay_ms,
      createdAt: w.created_at,
      format: w.format,
      ...(w.public_key === undefined ? {} : { publicKey: w.public_key }),
    }),
  );

const Attempt = z
  .object({
    attempt: Whole,
    at: Timestamp,
    status: z.number().int().nullable(),
    latency_ms: z.number().min(0),
    outcome: z.enum(['delivered', 'retrying', 'failed']),
    reason: z.string(),
    next_delay_ms: z.number().nullable(),
    copy: Whole,
  })
  .transform((a): WebhookAttempt =>
    Object.freeze({
      attempt: a.attempt,
      at: a.at,
      status: a.status,
      latencyMs: a.latency_ms,
      outcome: a.outcome,
      reason: a.reason,
      nextDelayMs: a.next_delay_ms,
      copy: a.copy,
    }),
  );

const Delivery = z
  .object({
    event_id: z.string(),
    event_type: EventType,
    address: z.string(),
    created_at: Timestamp,
    state: z.enum(['pending', 'delivered', 'dead_lettered', 'cancelled']),
    next_attempt_at: z.union([Timestamp, z.null()]),
    attempts: z.array(Attempt),
    held: z.literal('subscription_unconfirmed').optional(),
  })
  .transform((d): WebhookDelivery =>
    Object.freeze({
      eventId: d.event_id,
      eventType: d.event_type,
      address: d.address,
      createdAt: d.created_at,
      state: d.state,
      nextAttemptAt: d.next_attempt_at,
      attempts: Object.freeze(d.attempts),
      ...(d.held ? { held: d.held } : {}),
    }),
  );

const DeadLetter = z
  .object({
    event_id: z.string(),
    event_type: EventType,
    address: z.string(),
    dead_at: Timestamp,
    reason: z.string(),
    payload_excerpt: z.string(),
    attempts: z.array(Attempt),
  })
  .transform((d): WebhookDeadLetter =>
    Object.freeze({
      eventId: d.event_id,
      eventType: d.event_type,
      address: d.address,
      deadAt: d.dead_at,
      reason: d.reason,
      payloadExcerpt: d.payload_excerpt,
      attempts: Object.freeze(d.attempts),
    }),
  );

/** `POST /api/v1/provider-events`'s answer. */
export const ProviderEventReported = z.object({
  address: z.string(),
  event: z.enum(REPORTABLE_PROVIDER_EVENTS as [ReportedProviderEvent, ...ReportedProviderEvent[]]),
  provider: z.enum(PROVIDER_NAMES as [ProviderName, ...ProviderName[]]),
  provider_message_id: z.string(),
  webhooks: z.number().int().min(0),
});

export const WebhookAnswer = z.object({ webhook: Registration });
export const WebhookList = z.object({ webhooks: z.array(Registration) });
export const WebhookRemoved = z.object({ deleted: z.boolean() });
export const WebhookDeliveries = z.object({ deliveries: z.array(Delivery) });
export const WebhookDeadLetters = z.object({ dead_letters: z.array(DeadLetter) });
export const WebhookReplayed = z.object({ delivery: Delivery });
