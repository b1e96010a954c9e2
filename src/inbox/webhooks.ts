// `inbox.webhooks`: webhooks scoped to one inbox's address - register an
// endpoint of the app under test, and read back every event the embedded
// server sent it, each attempt, and the dead letters. What this inbox
// registers is removed at the test's teardown (runner/test-inbox.ts), and
// with the mailbox on the server.
import type { MailBackend } from '../backends/backend.js';
import { unsupported } from '../backends/unsupported.js';
import type { WebhookDeadLetter, WebhookDelivery, WebhookRegistration } from '../client/webhooks.js';
import { describeValue, expectedError } from '../contract/validation.js';
import { printableSecretProblem, WEBHOOK_EVENT_TYPES, WEBHOOK_LIMITS, type WebhookEventType } from '../contract/webhooks.js';
import {
  PROVIDER_EVENT_TYPES,
  REPORTABLE_PROVIDER_EVENTS,
  WEBHOOK_FORMATS,
  type ReportedProviderEvent,
  type WebhookFormat,
  type WireProviderEventReported,
} from '../contract/provider-events.js';
import type { WireWebhookInput } from '../contract/webhook-wire.js';
import type { Clock } from '../wait/clock.js';
import { callWithRetry } from '../wait/retry.js';

/** A call's budget, retries included. */
const CALL_BUDGET_MS = 10_000;
/** How often `watch` reads the delivery log. */
export const WEBHOOK_WATCH_INTERVAL_MS = 250;

export interface WebhookRetryOptions {
  /** Attempts in all, the first included (1 to 100). Default 5. */
  readonly maxAttempts?: number | undefined;
  /** The wait before the first retry, in ms. Default 60,000. */
  readonly initialDelayMs?: number | undefined;
  /** Each further wait is this many times the one before (1 to 100). Default 5. */
  readonly factor?: number | undefined;
  /** The longest wait, before jitter, in ms. Default 30 minutes (or `initialDelayMs`, if larger). */
  readonly maxDelayMs?: number | undefined;
}

export interface AddWebhookOptions {
  /** The app's endpoint, e.g. `http://127.0.0.1:3000/webhooks/mail`. */
  readonly url: string | URL;
  /**
   * How the events are shaped and signed: `mailroom` (the default), or a
   * provider's delivery events (`resend`, `sendgrid`, `mailgun`,
   * `postmark`, `ses`), signed as that provider signs them
   * (docs/providers.md, "Delivery events").
   */
  readonly format?: WebhookFormat | undefined;
  /** Signs every attempt; the server makes one up when omitted (`webhook.secret`; a `sendgrid` webhook's public key is `webhook.registration.publicKey`). */
  readonly secret?: string | undefined;
  /** Default: every type of the format (`message.received`, `delivery.deferred`, `delivery.rejected`; or `provider.*`). */
  readonly events?: readonly WebhookEventType[] | undefined;
  /** The retry policy; compress it for tests, e.g. `{ maxAttempts: 5, initialDelayMs: 200, factor: 2, maxDelayMs: 2_000 }`. */
  readonly retry?: WebhookRetryOptions | undefined;
  /** One attempt's timeout, in ms. Default 10,000. */
  readonly timeoutMs?: number | undefined;
  /** One event at a time, in order (default true). */
  readonly ordered?: boolean | undefined;
  /** Test control: deliver each event this many times with the same id (1 to 10). */
  readonly duplicates?: number | undefined;
  /** Test control: deliver events in swapped pairs, the second first. */
  readonly outOfOrder?: boolean | undefined;
  /** Test control: hold each event this long before its first attempt, in ms. */
  readonly firstAttemptDelayMs?: number | undefined;
}

export interface WebhookWatchOptions {
  /** How long to keep reading the log, in ms. */
  readonly within: number;
  readonly signal?: AbortSignal | undefined;
}

export interface WebhookWatchOutcome<T> {
  /** The log as last read, oldest first. */
  readonly deliveries: readonly WebhookDelivery[];
  readonly settled: T | undefined;
  readonly elapsedMs: number;
  /** True when a signal (the test's own deadline) ended it before `within`. */
  readonly cutShort: boolean;
}

/** A webhook registered through `inbox.webhooks.add()`. */
export interface Webhook {
  readonly id: string;
  readonly url: string;
  /** Give it to `verifyWebhookSignature` in the handler. */
  readonly secret: string;
  /** The address it is scoped to: the inbox's. */
  readonly address: string;
  /** The registration as the server stored it, every field filled in. */
  readonly registration: WebhookRegistration;
  /** Every event sent to the endpoint, with each attempt, oldest first. */
  deliveries(): Promise<WebhookDelivery[]>;
  /** The events given up on, with their whole attempt history. */
  deadLetters(): Promise<WebhookDeadLetter[]>;
  /** Sends a dead letter again, with a fresh budget of attempts. */
  replay(eventId: string): Promise<WebhookDelivery>;
  /** Stops it: nothing more is sent, pending retries are cancelled. Idempotent; true when it was still registered. */
  remove(): Promise<boolean>;
  /** Reads the log every 250 ms until `settle` returns something, or `within` ms passed. The matchers are built on it. */
  watch<T>(settle: (deliveries: readonly WebhookDelivery[]) => T | undefined, options: WebhookWatchOptions): Promise<WebhookWatchOutcome<T>>;
  /** The inbox's default budget for a wait, in ms (the matchers' default `within`). */
  readonly timeout: number;
}

/** Webhooks for one address (`inbox.webhooks`). */
export interface InboxWebhooks {
  /** Registers an endpoint for events at this inbox's address. */
  add(options: AddWebhookOptions): Promise<Webhook>;
  /** The webhooks this inbox registered and has not removed. */
  readonly list: () => readonly Webhook[];
  /** Removes every webhook this inbox registered (the test fixtures do it at teardown). */
  removeAll(): Promise<void>;
  /**
   * Says what became of the last mail sent to this address through a
   * provider API (`bounced`, `soft_bounced`, `complained`, `delayed`,
   * `delivered`, `dropped`): the provider-format webhooks are sent that event, about
   * that send. Fails when no provider send reached the address.
   */
  providerEvent(event: ReportedProviderEvent, options?: { readonly detail?: string | undefined }): Promise<WireProviderEventReported>;
  /** True once a webhook was added through this inbox. */
  readonly used: boolean;
}

export interface InboxWebhooksContext {
  readonly address: string;
  readonly client: MailBackend;
  readonly clock: Clock;
  readonly requestTimeout: number;
  readonly timeout: number;
  readonly stopFor: (signal: AbortSignal | undefined) => AbortSignal | undefined;
}

const KEYS = ['url', 'format', 'secret', 'events', 'retry', 'timeoutMs', 'ordered', 'duplicates', 'outOfOrder', 'firstAttemptDelayMs'];
const RETRY_KEYS = ['maxAttempts', 'initialDelayMs', 'factor', 'maxDelayMs'];
const webhooks = new WeakSet<object>();

/** True for a `Webhook` returned by `inbox.webhooks.add()`. */
export function isWebhook(value: unknown): value is Webhook {
  return typeof value === 'object' && value !== null && webhooks.has(value);
}

function known(o: Record<string, unknown>, keys: readonly string[], where: string): void {
  for (const key of Object.keys(o)) {
    if (!keys.includes(key)) throw new TypeError(`Unknown webhook option \`${where}${key}\`; expected one of ${keys.map((k) => `${where}${k}`).join(', ')}`);
  }
}

function whole(value: unknown, name: string, min: number, max: number, what = 'a whole number'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw expectedError(name, `${what} from ${min} to ${max}`, value);
  return value;
}

function flag(value: unknown, name: string): boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') throw expectedError(name, 'true or false', value);
  return value;
}

/** The options as the wire takes them, checked with their own names (`retry.maxAttempts`); the server fills in the rest. */
export function webhookInput(options: AddWebhookOptions, address: string): WireWebhookInput {
  if (options === null || typeof options !== 'object') throw expectedError('options', 'an object with at least `url`', options);
  known(options as unknown as Record<string, unknown>, KEYS, '');
  const url = options.url instanceof URL ? options.url.href : options.url;
  if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url))
    throw expectedError('url', 'an http(s) URL like "http://127.0.0.1:3000/webhooks/mail"', options.url);
  if (options.format !== undefined && !WEBHOOK_FORMATS.includes(options.format))
    throw expectedError('format', `one of ${WEBHOOK_FORMATS.join(', ')}`, options.format);
  const types: readonly WebhookEventType[] = (options.format ?? 'mailroom') === 'mailroom' ? WEBHOOK_EVENT_TYPES : PROVIDER_EVENT_TYPES;
  const secretProblem = options.secret === undefined ? undefined : printableSecretProblem(options.secret);
  if (secretProblem !== undefined) throw expectedError('secret', secretProblem, typeof options.secret === 'string' ? '(not shown)' : options.secret);
  if (options.events !== undefined) {
    if (!Array.isArray(options.events) || options.events.length === 0)
      throw expectedError('events', `a non-empty array of ${types.join(', ')}`, options.events);
    for (const type of options.events as readonly unknown[]) {
      if (!types.includes(type as WebhookEventType))
        throw new TypeError(`Unknown event type ${describeValue(type)} in \`events\`; expected ${types.join(', ')}`);
    }
  }
  let retry: WireWebhookInput['retry'];
  if (options.retry !== undefined) {
    const r = options.retry;
    if (r === null || typeof r !== 'object')
      throw expectedError('retry', 'an object like { maxAttempts: 5, initialDelayMs: 200, factor: 2, maxDelayMs: 2000 }', r);
    known(r as unknown as Record<string, unknown>, RETRY_KEYS, 'retry.');
    const factor = r.factor;
    if (factor !== undefined && (typeof factor !== 'number' || !(factor >= 1 && factor <= WEBHOOK_LIMITS.maxFactor))) {
      throw expectedError('retry.factor', `a number from 1 to ${WEBHOOK_LIMITS.maxFactor}`, factor);
    }
    const ms = (value: unknown, name: string) => whole(value, name, 0, WEBHOOK_LIMITS.maxDelayMs, 'a whole number of milliseconds');
    retry = {
      max_attempts: whole(r.maxAttempts, 'retry.maxAttempts', 1, WEBHOOK_LIMITS.maxAttempts),
      initial_delay_ms: ms(r.initialDelayMs, 'retry.initialDelayMs'),
      factor,
      max_delay_ms: ms(r.maxDelayMs, 'retry.maxDelayMs'),
    };
  }
  const input = {
    url,
    format: options.format,
    secret: options.secret,
    events: options.events,
    address,
    retry,
    timeout_ms: whole(options.timeoutMs, 'timeoutMs', 1, WEBHOOK_LIMITS.maxTimeoutMs, 'a whole number of milliseconds'),
    ordered: flag(options.ordered, 'ordered'),
    duplicates: whole(options.duplicates, 'duplicates', 1, WEBHOOK_LIMITS.maxDuplicates),
    out_of_order: flag(options.outOfOrder, 'outOfOrder'),
    first_attempt_delay_ms: whole(options.firstAttemptDelayMs, 'firstAttemptDelayMs', 0, WEBHOOK_LIMITS.maxDelayMs, 'a whole number of milliseconds'),
  };
  // Undefined keys are left out of the JSON by JSON.stringify, so the server's defaults apply.
  return JSON.parse(JSON.stringify(input)) as WireWebhookInput;
}

export function createInboxWebhooks(context: InboxWebhooksContext): InboxWebhooks {
  const { address, client, clock, requestTimeout } = context;
  const added = new Set<Webhook>();
  let used = false;
  const retried = <T>(call: (timeout: number) => Promise<T>, signal?: AbortSignal, budgetMs = CALL_BUDGET_MS): Promise<T> =>
    callWithRetry(call, { clock, hardStop: clock.now() + budgetMs, requestTimeout, signal });

  const wrap = (registration: WebhookRegistration): Webhook => {
    const { id } = registration;
    const read = (signal?: AbortSignal, budgetMs?: number) => retried((timeout) => client.webhookDeliveries(id, { timeout, signal }), signal, budgetMs);
    const webhook: Webhook = Object.freeze({
      id,
      url: registration.url,
      secret: registration.secret,
      address,
      registration,
      timeout: context.timeout,
      deliveries: () => read(),
      deadLetters: () => retried((timeout) => client.webhookDeadLetters(id, { timeout })),
      replay: (eventId: string) => retried((timeout) => client.replayDeadLetter(id, eventId, { timeout })),
      async remove() {
        const removed = await retried((timeout) => client.removeWebhook(id, { timeout }));
        added.delete(webhook);
        return removed;
      },
      async watch<T>(settle: (deliveries: readonly WebhookDelivery[]) => T | undefined, options: WebhookWatchOptions): Promise<WebhookWatchOutcome<T>> {
        if (typeof options?.within !== 'number' || !(options.within >= 0))
          throw expectedError('within', 'a non-negative number of milliseconds', options?.within);
        const signal = context.stopFor(options.signal);
        const startedAt = clock.now();
        const endsAt = startedAt + options.within;
        for (;;) {
          const deliveries = await read(signal, Math.max(requestTimeout, endsAt - clock.now() + requestTimeout));
          const settled = settle(deliveries);
          const elapsedMs = clock.now() - startedAt;
          if (settled !== undefined) return { deliveries, settled, elapsedMs, cutShort: false };
          if (signal?.aborted) return { deliveries, settled: undefined, elapsedMs, cutShort: true };
          const left = endsAt - clock.now();
          if (left <= 0) return { deliveries, settled: undefined, elapsedMs, cutShort: false };
          await clock.sleep(Math.min(WEBHOOK_WATCH_INTERVAL_MS, left), signal);
        }
      },
    });
    webhooks.add(webhook);
    return webhook;
  };

  return Object.freeze<InboxWebhooks>({
    async add(options: AddWebhookOptions): Promise<Webhook> {
      const input = webhookInput(options, address);
      used = true;
      // Not retried: a POST that timed out may have registered, and a second one would double every event.
      const webhook = wrap(await client.addWebhook(input, { timeout: requestTimeout }));
      added.add(webhook);
      return webhook;
    },
    list: () => [...added],
    async providerEvent(event, options = {}) {
      if (!REPORTABLE_PROVIDER_EVENTS.includes(event)) throw expectedError('event', `one of ${REPORTABLE_PROVIDER_EVENTS.join(', ')}`, event);
      if (!client.reportProviderEvent) throw unsupported(client.backend, client.apiURL, 'webhooks', address);
      // Not retried: a report that timed out may have been taken, and a second one would send the event twice.
      return client.reportProviderEvent({ address, event, ...(options.detail === undefined ? {} : { detail: options.detail }) }, { timeout: requestTimeout });
    },
    async removeAll(): Promise<void> {
      await Promise.all([...added].map((webhook) => webhook.remove()));
    },
    get used() {
      return used;
    },
  });
}
