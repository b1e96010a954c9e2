// A webhook registration as the HTTP API (or `mailroom serve --webhook`)
// receives it, checked field by field and defaulted here, in one place.
// Every mistake names the wire field and the value (``Expected
// `retry.max_attempts` to be a whole number from 1 to 100, got 0``); the
// API answers it as `400 invalid_request`. Unknown fields are refused, so a
// misspelt one never silently falls back to a default.
import { randomBytes } from 'node:crypto';
import { describeValue, expectedError } from '../../contract/validation.js';
import {
  DEFAULT_WEBHOOK_RETRY,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  printableSecretProblem,
  WEBHOOK_EVENT_TYPES,
  WEBHOOK_LIMITS,
  type WebhookEventType,
  type WebhookRetryPolicy,
} from '../../contract/webhooks.js';
import type { WireWebhook } from '../../contract/webhook-wire.js';
import { PROVIDER_EVENT_TYPES, WEBHOOK_FORMATS, type WebhookFormat } from '../../contract/provider-events.js';
import { providerFormatOf } from './provider-events/formats.js';
import { publicKeyOf } from './provider-events/sendgrid.js';

/** A registration, validated and complete. Plain data, so a store can keep it anywhere. */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly secret: string;
  readonly events: readonly WebhookEventType[];
  /** The mailbox key it is scoped to; undefined: every address. */
  readonly address: string | undefined;
  readonly retry: WebhookRetryPolicy;
  readonly timeoutMs: number;
  readonly ordered: boolean;
  readonly duplicates: number;
  readonly outOfOrder: boolean;
  readonly firstAttemptDelayMs: number;
  /** Wall-clock ms. */
  readonly createdAt: number;
  /** How its events are shaped and signed: mailroom's own (undefined, as registrations made before formats are) or a provider's. */
  readonly format?: WebhookFormat | undefined;
}

const FIELDS = ['url', 'format', 'secret', 'events', 'address', 'retry', 'timeout_ms', 'ordered', 'duplicates', 'out_of_order', 'first_attempt_delay_ms'];
const RETRY_FIELDS = ['max_attempts', 'initial_delay_ms', 'factor', 'max_delay_ms'];

function object(value: unknown, name: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw expectedError(name, 'a JSON object', value);
  return value as Record<string, unknown>;
}

function onlyKnown(body: Record<string, unknown>, known: readonly string[], where: string): void {
  for (const key of Object.keys(body)) {
    if (!known.includes(key)) throw new TypeError(`Unknown field \`${where}${key}\`; expected one of ${known.map((k) => `${where}${k}`).join(', ')}`);
  }
}

function whole(value: unknown, name: string, min: number, max: number, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw expectedError(name, `${what} from ${min} to ${max}`, value);
  return value;
}

function flag(value: unknown, name: string): boolean {
  if (typeof value !== 'boolean') throw expectedError(name, 'true or false', value);
  return value;
}

/** `format`: mailroom's own unless a provider is named. */
function formatOf(value: unknown): WebhookFormat {
  if (value === undefined) return 'mailroom';
  if (!WEBHOOK_FORMATS.includes(value as WebhookFormat)) throw expectedError('format', `one of ${WEBHOOK_FORMATS.join(', ')}`, value);
  return value as WebhookFormat;
}

/**
 * A Postmark-format URL may carry basic-auth credentials, as Postmark's
 * webhook settings take them: they become the secret (`user:pass`, sent as
 * the Authorization header) and the URL is kept without them.
 */
function splitCredentials(value: unknown): { readonly url: unknown; readonly credentials: string | undefined } {
  if (typeof value !== 'string') return { url: value, credentials: undefined };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { url: value, credentials: undefined };
  }
  if (!url.username && !url.password) return { url: value, credentials: undefined };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.href, credentials };
}

/** The secret of a mailroom-format registration: given and printable, or made. */
function mailroomSecret(given: unknown): string {
  if (given === undefined) return makeSecret();
  const problem = printableSecretProblem(given);
  if (problem !== undefined) throw expectedError('secret', problem, '(not shown)');
  return given as string;
}

/** The secret of a provider-format registration: given and fit for the format, or made for it. */
function providerSecret(format: WebhookFormat, given: unknown, credentials: string | undefined): string | undefined {
  const formatter = providerFormatOf(format);
  if (!formatter) return undefined;
  if (format === 'postmark') {
    if (given !== undefined) throw expectedError('secret', formatter.secretProblem('')!, '(not shown)');
    return credentials ?? '';
  }
  if (given === undefined) return formatter.makeSecret();
  const problem = typeof given === 'string' ? formatter.secretProblem(given) : 'a string';
  if (problem !== undefined) throw expectedError('secret', `for format ${format}, ${problem}`, '(not shown)');
  return given as string;
}

function webhookUrl(value: unknown): string {
  let url: URL | undefined;
  if (typeof value === 'string' && value.length <= WEBHOOK_LIMITS.maxUrlLength) {
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw expectedError(
      'url',
      `an http(s) URL without credentials, at most ${WEBHOOK_LIMITS.maxUrlLength} characters, like "http://127.0.0.1:3000/webhooks/mail"`,
      value,
    );
  }
  return url.href;
}

function retryPolicy(value: unknown): WebhookRetryPolicy {
  if (value === undefined) return DEFAULT_WEBHOOK_RETRY;
  const body = object(value, 'retry');
  onlyKnown(body, RETRY_FIELDS, 'retry.');
  const d = DEFAULT_WEBHOOK_RETRY;
  const maxAttempts =
    body.max_attempts === undefined ? d.maxAttempts : whole(body.max_attempts, 'retry.max_attempts', 1, WEBHOOK_LIMITS.maxAttempts, 'a whole number');
  const initialDelayMs =
    body.initial_delay_ms === undefined
      ? d.initialDelayMs
      : whole(body.initial_delay_ms, 'retry.initial_delay_ms', 0, WEBHOOK_LIMITS.maxDelayMs, 'a whole number of milliseconds');
  const factor = body.factor ?? d.factor;
  if (typeof factor !== 'number' || !Number.isFinite(factor) || factor < 1 || factor > WEBHOOK_LIMITS.maxFactor) {
    throw expectedError('retry.factor', `a number from 1 to ${WEBHOOK_LIMITS.maxFactor}`, body.factor);
  }
  // Without its own cap, a compressed schedule keeps the default's 30 minutes, never below its own first step.
  const maxDelayMs =
    body.max_delay_ms === undefined
      ? Math.max(initialDelayMs, d.maxDelayMs)
      : whole(body.max_delay_ms, 'retry.max_delay_ms', 0, WEBHOOK_LIMITS.maxDelayMs, 'a whole number of milliseconds');
  if (maxDelayMs < initialDelayMs) {
    throw new TypeError(`Expected \`retry.max_delay_ms\` (${maxDelayMs}) to be at least \`retry.initial_delay_ms\` (${initialDelayMs})`);
  }
  return Object.freeze({ maxAttempts, initialDelayMs, factor, maxDelayMs });
}

/** `events`: a mailroom-format webhook's types are mailroom's three, a provider-format one's the `provider.*` types. */
function eventTypes(value: unknown, format: WebhookFormat): readonly WebhookEventType[] {
  const known: readonly WebhookEventType[] = format === 'mailroom' ? WEBHOOK_EVENT_TYPES : PROVIDER_EVENT_TYPES;
  if (value === undefined) return known;
  const what = `a non-empty array of event types (${known.join(', ')})`;
  if (!Array.isArray(value) || value.length === 0) throw expectedError('events', what, value);
  for (const type of value) {
    if (!known.includes(type as WebhookEventType))
      throw new TypeError(`Unknown event type ${describeValue(type)} in \`events\` of a ${format}-format webhook; expected ${known.join(', ')}`);
  }
  return Object.freeze(known.filter((type) => (value as unknown[]).includes(type)));
}

/** A secret for a registration that names none: every attempt is signed, always. */
export function makeSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

export interface RegistrationContext {
  readonly id: string;
  readonly now: number;
  /** The mailbox key of an `address`, or throws its refusal (invalid_address, unknown_domain). */
  readonly mailboxKey: (address: string) => string;
}

/** The body of `POST /api/v1/webhooks`, checked and defaulted; throws a TypeError naming the field. */
export function parseWebhookInput(value: unknown, context: RegistrationContext): Webhook {
  const body = object(value, 'the body');
  onlyKnown(body, FIELDS, '');
  const format = formatOf(body.format);
  const split = format === 'postmark' ? splitCredentials(body.url) : { url: body.url, credentials: undefined };
  const url = webhookUrl(split.url);
  const secret = providerSecret(format, body.secret, split.credentials) ?? mailroomSecret(body.secret);
  let address: string | undefined;
  if (body.address !== undefined && body.address !== null) {
    if (typeof body.address !== 'string') throw expectedError('address', 'an email address or null', body.address);
    address = context.mailboxKey(body.address);
  }
  return Object.freeze({
    id: context.id,
    url,
    secret,
    events: eventTypes(body.events, format),
    address,
    retry: retryPolicy(body.retry),
    timeoutMs:
      body.timeout_ms === undefined
        ? DEFAULT_WEBHOOK_TIMEOUT_MS
        : whole(body.timeout_ms, 'timeout_ms', 1, WEBHOOK_LIMITS.maxTimeoutMs, 'a whole number of milliseconds'),
    ordered: body.ordered === undefined ? true : flag(body.ordered, 'ordered'),
    duplicates: body.duplicates === undefined ? 1 : whole(body.duplicates, 'duplicates', 1, WEBHOOK_LIMITS.maxDuplicates, 'a whole number'),
    outOfOrder: body.out_of_order === undefined ? false : flag(body.out_of_order, 'out_of_order'),
    firstAttemptDelayMs:
      body.first_attempt_delay_ms === undefined
        ? 0
        : whole(body.first_attempt_delay_ms, 'first_attempt_delay_ms', 0, WEBHOOK_LIMITS.maxDelayMs, 'a whole number of milliseconds'),
    createdAt: context.now,
    ...(format === 'mailroom' ? {} : { format }),
  });
}

export function toWireWebhook(webhook: Webhook): WireWebhook {
  return {
    id: webhook.id,
    url: webhook.url,
    secret: webhook.secret,
    events: webhook.events,
    address: webhook.address ?? null,
    retry: {
      max_attempts: webhook.retry.maxAttempts,
      initial_delay_ms: webhook.retry.initialDelayMs,
      factor: webhook.retry.factor,
      max_delay_ms: webhook.retry.maxDelayMs,
    },
    timeout_ms: webhook.timeoutMs,
    ordered: webhook.ordered,
    duplicates: webhook.duplicates,
    out_of_order: webhook.outOfOrder,
    first_attempt_delay_ms: webhook.firstAttemptDelayMs,
    created_at: new Date(webhook.createdAt).toISOString(),
    format: webhook.format ?? 'mailroom',
    ...(webhook.format === 'sendgrid' ? { public_key: publicKeyOf(webhook.secret) } : {}),
  };
}
