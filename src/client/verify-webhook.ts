// `verifyWebhookSignature`: what an app's webhook handler calls first, with
// the raw body it received, the request's headers and its secret. It checks
// the `mailroom-signature` header (contract/webhook-signature.ts) in
// constant time, refuses a timestamp outside the tolerance (a replayed
// request), and returns the parsed event. Any refusal is a `MailroomError`
// whose slug says which: `webhook_signature_missing`,
// `webhook_signature_invalid`, `webhook_signature_stale`, and
// `webhook_body_invalid` for a signed body that is not an event.
import { timingSafeEqual } from 'node:crypto';
import { parseSignatureHeader, WEBHOOK_HEADERS, webhookSignature } from '../contract/webhook-signature.js';
import type { WireWebhookEvent } from '../contract/webhook-wire.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../contract/webhooks.js';
import { expectedError } from '../contract/validation.js';
import { MailroomError } from './errors.js';

/** Headers as node:http, undici, Express or fetch's `Headers` give them. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyWebhookOptions {
  /** The body exactly as received: a string or the raw bytes, never a re-serialised object. */
  readonly body: string | Uint8Array;
  readonly headers: WebhookHeaders;
  /** The webhook's secret (`webhook.secret`, or `--webhook-secret`). */
  readonly secret: string;
  /** How far the signed timestamp may be from now, in seconds. Default 300. */
  readonly toleranceSeconds?: number | undefined;
  /** Now, in ms since the epoch (tests). Default `Date.now()`. */
  readonly now?: number | undefined;
}

/** The event an endpoint received (`message.received`, `delivery.deferred`, `delivery.rejected`). */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = WireWebhookEvent<T>;

export const DEFAULT_TOLERANCE_SECONDS = 300;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const value: string | readonly string[] | undefined = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return typeof value === 'string' || value === undefined ? value : value[0];
}

function refuse(slug: string, message: string): MailroomError {
  return new MailroomError(message, { slug });
}

/** Checks a webhook request's signature and returns its event; throws a `MailroomError` when it is not from the server that holds `secret`. */
export function verifyWebhookSignature(options: VerifyWebhookOptions): WebhookEvent {
  if (options === null || typeof options !== 'object') throw expectedError('options', 'an object with body, headers and secret', options);
  const { body, headers, secret } = options;
  if (typeof secret !== 'string' || secret === '') throw expectedError('secret', "the webhook's secret, a non-empty string", secret);
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) throw expectedError('body', 'the raw body as received (a string or bytes)', body);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) throw expectedError('toleranceSeconds', 'a non-negative number of seconds', tolerance);
  const raw = header(headers, WEBHOOK_HEADERS.signature);
  if (raw === undefined)
    throw refuse('webhook_signature_missing', `The request has no ${WEBHOOK_HEADERS.signature} header: it did not come from a mailroom webhook`);
  const parsed = parseSignatureHeader(raw);
  if (!parsed)
    throw refuse(
      'webhook_signature_invalid',
      `The ${WEBHOOK_HEADERS.signature} header is malformed (expected t=<unix seconds>,v1=<64 hex digits>): ${JSON.stringify(raw.slice(0, 120))}`,
    );
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const expected = Buffer.from(webhookSignature(secret, parsed.timestamp, bytes), 'hex');
  const matches = parsed.signatures.some((signature) => timingSafeEqual(Buffer.from(signature, 'hex'), expected));
  if (!matches) {
    throw refuse(
      'webhook_signature_invalid',
      "The webhook signature does not match the body: the body was changed on the way (or re-serialised before checking: pass the raw body), or the secret is not this webhook's",
    );
  }
  const nowSeconds = (options.now ?? Date.now()) / 1000;
  const skew = nowSeconds - parsed.timestamp;
  if (Math.abs(skew) > tolerance) {
    throw refuse(
      'webhook_signature_stale',
      `The webhook was signed ${Math.round(Math.abs(skew))} s ${skew >= 0 ? 'ago' : 'in the future'}, outside the tolerance of ${tolerance} s: a replayed request is refused`,
    );
  }
  let event: unknown;
  try {
    event = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw refuse('webhook_body_invalid', 'The signed body is not JSON');
  }
  const e = event as Partial<WebhookEvent> | null;
  if (!e || typeof e !== 'object' || typeof e.id !== 'string' || !WEBHOOK_EVENT_TYPES.includes(e.type as WebhookEventType) || typeof e.address !== 'string') {
    throw refuse('webhook_body_invalid', 'The signed body is not a mailroom webhook event (id, type, address, data)');
  }
  return e as WebhookEvent;
}
