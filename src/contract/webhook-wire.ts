// The webhooks' JSON bodies (docs/CONTRACT.md, "Webhooks"), as they travel:
// the registration calls, the delivery log, the dead letters, and the
// event an endpoint receives. snake_case, durations in ms, times RFC 3339.
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind } from './smtp-lab.js';
import type { WebhookAttemptOutcome, WebhookDeliveryState, WebhookEventType } from './webhooks.js';
import type { WireMessage } from './wire.js';
import type { WebhookFormat } from './provider-events.js';

export interface WireRetryPolicy {
  readonly max_attempts: number;
  readonly initial_delay_ms: number;
  readonly factor: number;
  readonly max_delay_ms: number;
}

/** `POST /api/v1/webhooks`: only `url` is required. */
export interface WireWebhookInput {
  /** For `postmark`, the basic-auth credentials Postmark sends may be in it: `https://user:pass@host/path`. */
  readonly url: string;
  /**
   * How the events are shaped and signed (docs/CONTRACT.md, "Provider
   * events"): `mailroom` (the default), or a provider's: `resend`,
   * `sendgrid`, `mailgun`, `postmark`, `ses`.
   */
  readonly format?: WebhookFormat;
  /**
   * Signs every attempt; the server makes one up when none is given (and
   * returns it). By format: mailroom's and Mailgun's any printable string,
   * Resend's a `whsec_` Svix secret, SendGrid's an EC P-256 private key
   * (base64 PKCS#8 DER); none for Postmark (the URL's credentials) and SES
   * (the server's certificate).
   */
  readonly secret?: string;
  /** Default: every type. */
  readonly events?: readonly WebhookEventType[];
  /** Only events at this address (a mailbox); default: every address. */
  readonly address?: string | null;
  readonly retry?: Partial<WireRetryPolicy>;
  /** One attempt's timeout, ms (default 10,000). */
  readonly timeout_ms?: number;
  /** Deliver one event at a time, in order (default true); false: each event on its own, side by side. */
  readonly ordered?: boolean;
  /** Test control: deliver each event this many times with the same id (default 1). */
  readonly duplicates?: number;
  /** Test control: deliver events in swapped pairs, the second before the first (default false). */
  readonly out_of_order?: boolean;
  /** Test control: hold each event this long before its first attempt, ms (default 0). */
  readonly first_attempt_delay_ms?: number;
}

/** A registration as stored: every field filled in. */
export interface WireWebhook {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly events: readonly WebhookEventType[];
  readonly address: string | null;
  readonly retry: WireRetryPolicy;
  readonly timeout_ms: number;
  readonly ordered: boolean;
  readonly duplicates: number;
  readonly out_of_order: boolean;
  readonly first_attempt_delay_ms: number;
  readonly created_at: string;
  readonly format: WebhookFormat;
  /** `sendgrid`: the public key (base64 DER) the app verifies the signature with, as SendGrid's settings show it. */
  readonly public_key?: string;
}

/** One attempt of one event at one endpoint: the seed's five fields and then some. */
export interface WireWebhookAttempt {
  readonly attempt: number;
  /** When the request went out (RFC 3339, ms). */
  readonly at: string;
  /** The answer's status; null when there was none (timeout, refused, reset). */
  readonly status: number | null;
  /** From the request going out to the answer's head (or the failure), ms. */
  readonly latency_ms: number;
  readonly outcome: WebhookAttemptOutcome;
  /** One word: the status (`503`), or `timeout`, `refused`, `reset`, `network`, `unavailable`, `signature`, `4xx-not-retried`, `cancelled`. */
  readonly reason: string;
  /** For `retrying`: how long until the next attempt, ms (the backoff with its jitter, or `Retry-After`). */
  readonly next_delay_ms: number | null;
  /** For a duplicate (`duplicates` > 1): which copy this was, 1-based. */
  readonly copy: number;
}

export interface WireWebhookDelivery {
  readonly event_id: string;
  readonly event_type: WebhookEventType;
  readonly address: string;
  readonly created_at: string;
  readonly state: WebhookDeliveryState;
  /** When the next attempt is due, while `pending` and between attempts (null while `held`). */
  readonly next_attempt_at: string | null;
  readonly attempts: readonly WireWebhookAttempt[];
  /**
   * Present while the event waits, unattempted, for something other than its
   * time: `subscription_unconfirmed`, an SES webhook's notification held until
   * the app fetches the `SubscribeURL` of its `SubscriptionConfirmation`.
   */
  readonly held?: 'subscription_unconfirmed';
}

/** `GET /api/v1/webhooks/{id}/deliveries`: every event the endpoint was sent, oldest first. */
export interface WireWebhookDeliveries {
  readonly webhook_id: string;
  readonly deliveries: readonly WireWebhookDelivery[];
}

export interface WireDeadLetter {
  readonly event_id: string;
  readonly event_type: WebhookEventType;
  readonly address: string;
  readonly dead_at: string;
  /** The last attempt's reason: the error category. */
  readonly reason: string;
  /** The first 512 characters of the body that was sent. */
  readonly payload_excerpt: string;
  readonly attempts: readonly WireWebhookAttempt[];
}

/** `GET /api/v1/webhooks/{id}/dead-letters`, oldest first. */
export interface WireDeadLetters {
  readonly webhook_id: string;
  readonly dead_letters: readonly WireDeadLetter[];
}

/** What the endpoint receives: the event envelope. */
export interface WireWebhookEvent<T extends WebhookEventType = WebhookEventType> {
  readonly id: string;
  readonly type: T;
  readonly created_at: string;
  /** The mailbox the event is about. */
  readonly address: string;
  readonly data: T extends 'message.received' ? WireMessageReceived : WireDeliveryOutcome;
}

export interface WireMessageReceived {
  /** The message as `GET /api/v1/message/{id}` shows it. */
  readonly message: WireMessage;
  /** Its source as received (`GET /api/v1/message/{id}/raw?mailbox=A`), while it is kept. */
  readonly raw_url: string;
}

/** `delivery.deferred` (a 4xx) and `delivery.rejected` (a 5xx) at an address: the SMTP reply. */
export interface WireDeliveryOutcome {
  readonly from: string;
  readonly to: string;
  readonly client_ip: string;
  readonly stage: SmtpAttemptStage;
  readonly code: number;
  readonly enhanced_code: string | null;
  readonly text: string;
  readonly outcome: SmtpAttemptOutcome;
  readonly rule: SmtpRuleKind | null;
  readonly message_id: string | null;
  readonly subject: string | null;
}
