// Webhooks (docs/CONTRACT.md, "Webhooks", an embedded-server extension):
// what both halves must agree on - the event types, the retry policy's
// defaults and bounds, the test controls' bounds, and the one-word reasons
// an attempt is logged with. Each half checks its own input against these
// and names its own keys (the client `maxAttempts`, the wire
// `max_attempts`); only the server fills in defaults.
import type { ExponentialBackoff } from './backoff.js';
import { PROVIDER_EVENT_TYPES, type ProviderEventType } from './provider-events.js';

/** mailroom's own three, and a provider-format webhook's `provider.*` (provider-events.ts). */
export type WebhookEventType = 'message.received' | 'delivery.deferred' | 'delivery.rejected' | ProviderEventType;
/** The types of a mailroom-format webhook (its default `events`). */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze(['message.received', 'delivery.deferred', 'delivery.rejected'] as const);

/** Every type an event may have, whatever the webhook's format: what a delivery log or a matcher may name. */
export const ALL_WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze([...WEBHOOK_EVENT_TYPES, ...PROVIDER_EVENT_TYPES, 'provider.subscription']);

export interface WebhookRetryPolicy extends ExponentialBackoff {
  /**
   * Attempts in all, the first one included: 5 means one attempt and at
   * most four retries, and the fifth failure is the last.
   */
  readonly maxAttempts: number;
}

/**
 * The default schedule has the seed's shape, short first and longer later:
 * a first attempt at once, then retries after about 1, 5, 25 and 30 minutes
 * (the steps 60 s x 5^n, capped at 30 min, each plus up to half again of
 * jitter). A test compresses it per registration, e.g. 5 / 200 ms / 2 / 2 s.
 */
export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = Object.freeze({
  maxAttempts: 5,
  initialDelayMs: 60_000,
  factor: 5,
  maxDelayMs: 30 * 60_000,
});

/** One attempt's timeout when a registration names none, in ms. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

export const WEBHOOK_LIMITS = Object.freeze({
  maxAttempts: 100,
  /** Any delay or timeout: up to a day. */
  maxDelayMs: 24 * 60 * 60 * 1000,
  maxFactor: 100,
  maxTimeoutMs: 10 * 60 * 1000,
  /** `duplicates`: each event delivered up to this many times with the same id. */
  maxDuplicates: 10,
  maxSecretLength: 256,
  maxUrlLength: 2048,
  /** Registrations one server holds at once. */
  maxWebhooks: 10_000,
  /** How long a `Retry-After` is honoured, at most (a day). */
  maxRetryAfterMs: 24 * 60 * 60 * 1000,
});

const PRINTABLE_SECRET = new RegExp(`^[\\x21-\\x7e]{1,${WEBHOOK_LIMITS.maxSecretLength}}$`);

/** Why `secret` cannot sign mailroom's webhooks (and Mailgun's format), or undefined: 1 to 256 characters of printable ASCII without spaces. */
export function printableSecretProblem(secret: unknown): string | undefined {
  return typeof secret === 'string' && PRINTABLE_SECRET.test(secret)
    ? undefined
    : `1 to ${WEBHOOK_LIMITS.maxSecretLength} characters of printable ASCII without spaces`;
}

/**
 * What became of one attempt: `delivered` (a 2xx), `retrying` (a transient
 * failure with attempts left: another is scheduled), `failed` (the last
 * attempt, or a failure that is not retried: the event is dead-lettered).
 */
export type WebhookAttemptOutcome = 'delivered' | 'retrying' | 'failed';

/**
 * An event's state for one endpoint: `pending` (queued or between
 * attempts), `delivered`, `dead_lettered`, or `cancelled` (the webhook was
 * removed while it was pending).
 */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'dead_lettered' | 'cancelled';

/**
 * The one-word reason an attempt is logged with: the HTTP status as digits
 * (`200`, `503`, `429`), or one of these when there was no answer to tell it
 * by, or the answer's class decides: `timeout` (no answer within the
 * attempt's timeout), `refused` (connection refused), `reset` (the
 * connection dropped mid-answer), `network` (anything else on the way),
 * `unavailable` (the event's message could not be read from a shared store,
 * so nothing was sent; retried), `lost` (the server making the attempt
 * stopped - killed, or shut down mid-attempt - before its outcome was
 * known: on a shared store another server records it and retries; it may
 * or may not have reached the receiver, and it counts toward the cap),
 * `signature` (401 or 403: the receiver refused the signature, not
 * retried), `4xx-not-retried` (any other 4xx but 408 and 429), and
 * `cancelled` (the webhook was removed mid-attempt).
 */
export type WebhookFailureWord = 'timeout' | 'refused' | 'reset' | 'network' | 'unavailable' | 'lost' | 'signature' | '4xx-not-retried' | 'cancelled';
