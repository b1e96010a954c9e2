// The mailbox service's HTTP API, one method per call of the contract.
//
// Thin on purpose: no retries, no pacing, no waiting - those belong to the
// wait loop (wait/), which knows the deadline. What this class does is
// give every request a timeout, and turn every answer into either a typed
// value or a typed error: a refusal carries its slug, a broken answer is a
// network error, never a stray `TypeError` three frames away.
import { request, type Dispatcher } from 'undici';
import { DEFAULT_API_URL } from '../contract/defaults.js';
import { MAX_LIST_LIMIT, MAX_WAIT_SECONDS } from '../contract/limits.js';
import { API_BASE, HEALTH_PATH, PAGING_PARAM, PROVIDER_EVENTS_PATH } from '../contract/routes.js';
import { assertMs, expectedError } from '../contract/validation.js';
import type { WireSmtpRuleInput } from '../contract/wire.js';
import type { WireWebhookInput } from '../contract/webhook-wire.js';
import type { WireProviderEventReport, WireProviderEventReported } from '../contract/provider-events.js';
import { MailroomApiError, MailroomError, isTransient, noAnswerError } from './errors.js';
import type { MailboxIndex, MailSummary, MessageDetail, ServiceFeatures } from './messages.js';
import type { SmtpAttempt, SmtpRule } from './smtp-lab.js';
import {
  WebhookAnswer,
  ProviderEventReported,
  WebhookDeadLetters,
  WebhookDeliveries,
  WebhookList,
  WebhookRemoved,
  WebhookReplayed,
  type WebhookDeadLetter,
  type WebhookDelivery,
  type WebhookRegistration,
} from './webhooks.js';
import {
  Deleted,
  Detail,
  featuresOf,
  Listing,
  MailboxDeleted,
  MailboxIndexAnswer,
  NO_FEATURES,
  parseBody,
  SmtpAttempts,
  SmtpRuleAdded,
  SmtpRules,
  SmtpRulesCleared,
  Status,
  WaitAnswer,
  type Answer,
} from './wire-schemas.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
const USER_AGENT = 'mailroom-client/0.1';

export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8025` (a trailing `/api/v1` is fine too). */
  readonly apiURL: string | URL;
  /** Sent as `Authorization: Bearer …` when set. */
  readonly token?: string | undefined;
  /** The default timeout of one request, in ms. */
  readonly requestTimeout?: number | undefined;
  /** An undici dispatcher (Agent, Pool, MockAgent…); undici's global one by default. */
  readonly dispatcher?: Dispatcher | undefined;
}

export interface CallOptions {
  /** This request's timeout in ms; the client's `requestTimeout` by default. */
  readonly timeout?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface ListOptions extends CallOptions {
  /** How many of the newest messages, 1..100 (the service's default is 25). */
  readonly limit?: number | undefined;
  /** Only messages older than this id: the next page down (when the service offers `features.paging`). */
  readonly beforeId?: string | undefined;
}

export interface MailboxIndexOptions extends CallOptions {
  /** Only addresses containing this text (case-insensitive), e.g. `@mailroom.test`. */
  readonly contains?: string | undefined;
  /** How many mailboxes, 1..100 (the service's default is 25). */
  readonly limit?: number | undefined;
}

export interface MailboxListing {
  readonly address: string;
  /** Newest first, as the service lists them. */
  readonly messages: readonly MailSummary[];
  /** Mail of this mailbox the service's message cap evicted, when it says so (the embedded server does). */
  readonly evicted?: EvictedMail | undefined;
}

export interface EvictedMail {
  readonly count: number;
  /** The id of the newest evicted message. */
  readonly newestId: string;
}

/** The most a service holds a long-poll. */
export const MAX_HOLD_MS = MAX_WAIT_SECONDS * 1000;

export interface WaitForMailOptions extends CallOptions {
  /** Answer once a message newer than this id is in the mailbox; any message counts when omitted. */
  readonly sinceId?: string | undefined;
  /** How long the service may hold the request, in ms (at most 25 s; more is clamped). */
  readonly holdMs: number;
  /** How many of the newest messages the answer lists, 1..100 (the service's default is 25). */
  readonly limit?: number | undefined;
  /** The long-poll's path, as `features()` found it. */
  readonly path: string;
  /**
   * How long the first look must wait for the address's floor (rule 4). The
   * embedded server defers that look itself, so this client sends nothing
   * for it; a hold made on the client (a catcher's push stream) waits it out.
   */
  readonly lookDelayMs?: number | undefined;
}

export interface WaitListing extends MailboxListing {
  /** True when the hold ended because its time was up, not because mail came. */
  readonly timedOut: boolean;
}

export class MailroomClient {
  /** The embedded server's contract, as every backend names itself (backends/backend.ts). */
  readonly backend = 'mailroom' as const;
  /** Ids sort by arrival within a mailbox, so one id is a watermark. */
  readonly idOrder = 'arrival' as const;
  /** The normalised base URL, without `/api/v1`. */
  readonly apiURL: string;
  readonly requestTimeout: number;
  readonly #token: string | undefined;
  readonly #dispatcher: Dispatcher | undefined;
  #features: Promise<ServiceFeatures> | undefined;

  constructor(options: ClientOptions) {
    if (options === null || typeof options !== 'object') throw new TypeError('Expected client options to be an object');
    this.apiURL = normalizeApiURL(options.apiURL);
    this.requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    assertMs('requestTimeout', this.requestTimeout, { positive: true });
    if (options.token !== undefined && (typeof options.token !== 'string' || options.token === '')) {
      throw new TypeError('Expected `token` to be a non-empty string');
    }
    this.#token = options.token;
    this.#dispatcher = options.dispatcher;
  }

  /** `GET /mailbox?address=A&limit=N[&before_id=ID]`: the newest messages (older than ID), newest first. */
  async listMessages(address: string, options: ListOptions = {}): Promise<MailboxListing> {
    const query: Record<string, string> = { address };
    if (options.limit !== undefined) {
      if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_LIMIT) {
        throw expectedError('limit', `an integer from 1 to ${MAX_LIST_LIMIT}`, options.limit);
      }
      query.limit = String(options.limit);
    }
    if (options.beforeId !== undefined) query[PAGING_PARAM] = options.beforeId;
    const answer = await this.#send('GET', `${API_BASE}/mailbox`, query, address, options);
    const listing = parseBody(answer, Listing);
    return { address: listing.address ?? address, messages: listing.messages, evicted: listing.evicted };
  }

  /** `GET /message/{id}?mailbox=A`: the full message. */
  async getMessage(address: string, id: string, options: CallOptions = {}): Promise<MessageDetail> {
    const answer = await this.#send('GET', `${API_BASE}/message/${encodeURIComponent(id)}`, { mailbox: address }, address, options);
    return parseBody(answer, Detail);
  }

  /** `GET /message/{id}/raw?mailbox=A`: the source as received. */
  async getRawMessage(address: string, id: string, options: CallOptions = {}): Promise<string> {
    const answer = await this.#send('GET', `${API_BASE}/message/${encodeURIComponent(id)}/raw`, { mailbox: address }, address, options, 'message/rfc822');
    return answer.text;
  }

  /** `DELETE /message/{id}?mailbox=A`: idempotent; false when it was already gone. */
  async deleteMessage(address: string, id: string, options: CallOptions = {}): Promise<boolean> {
    const answer = await this.#send('DELETE', `${API_BASE}/message/${encodeURIComponent(id)}`, { mailbox: address }, address, options);
    return parseBody(answer, Deleted).deleted;
  }

  /** `DELETE /mailbox?address=A`: idempotent; how many messages went. */
  async deleteMailbox(address: string, options: CallOptions = {}): Promise<number> {
    const answer = await this.#send('DELETE', `${API_BASE}/mailbox`, { address }, address, options);
    return parseBody(answer, MailboxDeleted).deleted;
  }

  /**
   * The features the service advertises in `GET /healthz`, asked once and
   * remembered. A service that does not advertise one (or has no /healthz,
   * or answers something else) simply has none; a transient failure says
   * "none" this time and asks again next time.
   */
  features(options: CallOptions = {}): Promise<ServiceFeatures> {
    this.#features ??= this.#send('GET', HEALTH_PATH, {}, undefined, options).then(
      (answer) => featuresOf(answer.text),
      (error: unknown) => {
        if (isTransient(error) || options.signal?.aborted) this.#features = undefined;
        return NO_FEATURES;
      },
    );
    return this.#features;
  }

  /**
   * The long-poll (`GET {path}?address=A&since_id=ID&timeout=S`): held by the
   * service until a message newer than `sinceId` is in the mailbox or
   * `holdMs` passed, then the listing at that moment, newest first. The
   * request's own timeout is the hold plus the client's request timeout.
   */
  async waitForMail(address: string, options: WaitForMailOptions): Promise<WaitListing> {
    const holdMs = Math.min(Math.max(0, options.holdMs), MAX_HOLD_MS);
    if (!Number.isFinite(holdMs)) throw expectedError('holdMs', 'a number of milliseconds', options.holdMs);
    const query: Record<string, string> = { address, timeout: (Math.ceil(holdMs) / 1000).toFixed(3) };
    if (options.sinceId !== undefined) query.since_id = options.sinceId;
    if (options.limit !== undefined) query.limit = String(options.limit);
    const timeout = options.timeout ?? holdMs + this.requestTimeout;
    const answer = await this.#send('GET', options.path, query, address, { timeout, signal: options.signal });
    const listing = parseBody(answer, WaitAnswer);
    return { address: listing.address ?? address, messages: listing.messages, evicted: listing.evicted, timedOut: listing.timed_out };
  }

  /** The SMTP rules of `address`, in the order they act (`GET {features.smtp_rules}?address=A`; embedded server). */
  async smtpRules(address: string, options: CallOptions = {}): Promise<SmtpRule[]> {
    const path = await this.#featurePath('smtpRules', options);
    return [...parseBody(await this.#send('GET', path, { address }, address, options), SmtpRules).rules];
  }

  /** Adds a rule after the address's others (`POST {features.smtp_rules}?address=A`): the rule as stored, and all of them. */
  async addSmtpRule(address: string, rule: WireSmtpRuleInput, options: CallOptions = {}): Promise<{ rule: SmtpRule; rules: SmtpRule[] }> {
    const path = await this.#featurePath('smtpRules', options);
    const added = parseBody(await this.#send('POST', path, { address }, address, options, 'application/json', JSON.stringify(rule)), SmtpRuleAdded);
    return { rule: added.rule, rules: [...added.rules] };
  }

  /** Clears the address's rules and what they remembered (`DELETE {features.smtp_rules}?address=A`); how many there were. */
  async clearSmtpRules(address: string, options: CallOptions = {}): Promise<number> {
    const path = await this.#featurePath('smtpRules', options);
    return parseBody(await this.#send('DELETE', path, { address }, address, options), SmtpRulesCleared).cleared;
  }

  /** The address's SMTP attempt log, oldest first (`GET {features.smtp_attempts}?address=A`). */
  async smtpAttempts(address: string, options: CallOptions = {}): Promise<SmtpAttempt[]> {
    const path = await this.#featurePath('smtpAttempts', options);
    return [...parseBody(await this.#send('GET', path, { address }, address, options), SmtpAttempts).attempts];
  }

  /**
   * The mailboxes that hold mail, the one whose newest message arrived last
   * first (`GET {features.mailboxes}?contains=S&limit=N`, the web UI's
   * index). It names no address, so it draws on no budget.
   */
  async mailboxes(options: MailboxIndexOptions = {}): Promise<MailboxIndex> {
    const path = (await this.features(options)).mailboxes;
    if (path === undefined) {
      throw new MailroomError(`${this.apiURL} offers no mailbox index (its GET ${HEALTH_PATH} advertises no features.mailboxes)`, { slug: 'unsupported' });
    }
    const query: Record<string, string> = {};
    if (options.contains !== undefined) query.contains = options.contains;
    if (options.limit !== undefined) {
      if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_LIMIT) {
        throw expectedError('limit', `an integer from 1 to ${MAX_LIST_LIMIT}`, options.limit);
      }
      query.limit = String(options.limit);
    }
    return parseBody(await this.#send('GET', path, query, undefined, options), MailboxIndexAnswer);
  }

  /** Registers a webhook (`POST {features.webhooks}`); the registration as stored, its secret included. */
  async addWebhook(input: WireWebhookInput, options: CallOptions = {}): Promise<WebhookRegistration> {
    const path = await this.#featurePath('webhooks', options);
    const answer = await this.#send('POST', path, {}, input.address ?? undefined, options, 'application/json', JSON.stringify(input));
    return parseBody(answer, WebhookAnswer).webhook;
  }

  /** A provider event for an address (`POST /api/v1/provider-events`): about the last provider send to it (docs/providers.md, "Delivery events"). */
  async reportProviderEvent(report: WireProviderEventReport, options: CallOptions = {}): Promise<WireProviderEventReported> {
    await this.#featurePath('webhooks', options);
    const answer = await this.#send('POST', PROVIDER_EVENTS_PATH, {}, report.address, options, 'application/json', JSON.stringify(report));
    return parseBody(answer, ProviderEventReported);
  }

  /** The registrations (`GET {features.webhooks}`), oldest first; with `address`, those scoped to it. */
  async webhooks(address?: string, options: CallOptions = {}): Promise<WebhookRegistration[]> {
    const path = await this.#featurePath('webhooks', options);
    return [...parseBody(await this.#send('GET', path, address === undefined ? {} : { address }, address, options), WebhookList).webhooks];
  }

  /** Removes a webhook (`DELETE .../{id}`): idempotent; false when it was already gone. */
  async removeWebhook(id: string, options: CallOptions = {}): Promise<boolean> {
    const path = await this.#featurePath('webhooks', options);
    return parseBody(await this.#send('DELETE', `${path}/${encodeURIComponent(id)}`, {}, undefined, options), WebhookRemoved).deleted;
  }

  /** Every event the webhook was sent, with its attempts, oldest first (`GET .../{id}/deliveries`). */
  async webhookDeliveries(id: string, options: CallOptions = {}): Promise<WebhookDelivery[]> {
    const path = await this.#featurePath('webhooks', options);
    return [...parseBody(await this.#send('GET', `${path}/${encodeURIComponent(id)}/deliveries`, {}, undefined, options), WebhookDeliveries).deliveries];
  }

  /** The webhook's dead letters, oldest first (`GET .../{id}/dead-letters`). */
  async webhookDeadLetters(id: string, options: CallOptions = {}): Promise<WebhookDeadLetter[]> {
    const path = await this.#featurePath('webhooks', options);
    return [...parseBody(await this.#send('GET', `${path}/${encodeURIComponent(id)}/dead-letters`, {}, undefined, options), WebhookDeadLetters).dead_letters];
  }

  /** Sends a dead letter again with a fresh budget of attempts (`POST .../{id}/dead-letters/{event}/replay`). */
  async replayDeadLetter(id: string, eventId: string, options: CallOptions = {}): Promise<WebhookDelivery> {
    const path = await this.#featurePath('webhooks', options);
    const where = `${path}/${encodeURIComponent(id)}/dead-letters/${encodeURIComponent(eventId)}/replay`;
    return parseBody(await this.#send('POST', where, {}, undefined, options, 'application/json', '{}'), WebhookReplayed).delivery;
  }

  /**
   * Where an extension's calls are. `features()` says "none" on trouble as
   * well, so before calling it unsupported the service is asked once more,
   * and trouble then throws (transient: a caller retries it).
   */
  async #featurePath(feature: 'smtpRules' | 'smtpAttempts' | 'webhooks', options: CallOptions): Promise<string> {
    const known = (await this.features(options))[feature];
    if (known !== undefined) return known;
    const fresh = featuresOf((await this.#send('GET', HEALTH_PATH, {}, undefined, options)).text);
    const path = fresh[feature];
    if (path !== undefined) {
      this.#features = Promise.resolve(fresh);
      return path;
    }
    if (feature === 'webhooks') {
      throw new MailroomError(
        `${this.apiURL} does not offer webhooks (its GET ${HEALTH_PATH} advertises no features.webhooks): they are an extension of mailroom's embedded server, which serves them unless started with \`webhooks: false\` (--no-webhooks)`,
        { slug: 'unsupported' },
      );
    }
    throw new MailroomError(
      `${this.apiURL} does not offer SMTP rules (its GET ${HEALTH_PATH} advertises no features.${feature === 'smtpRules' ? 'smtp_rules' : 'smtp_attempts'}): they are an extension of mailroom's embedded server, which serves them unless started with \`smtpRules: false\``,
      { slug: 'unsupported' },
    );
  }

  /**
   * `GET /healthz`: true when the service says it is ok. Its features come
   * with the answer and are remembered, so `features()` does not ask again.
   */
  async health(options: CallOptions = {}): Promise<boolean> {
    const answer = await this.#send('GET', HEALTH_PATH, {}, undefined, options);
    const { ok } = parseBody(answer, Status);
    this.#features ??= Promise.resolve(featuresOf(answer.text));
    return ok;
  }

  async #send(
    method: 'GET' | 'DELETE' | 'POST',
    path: string,
    query: Record<string, string>,
    address: string | undefined,
    options: CallOptions,
    accept = 'application/json',
    body?: string,
  ): Promise<Answer> {
    const url = new URL(this.apiURL + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const timeout = options.timeout ?? this.requestTimeout;
    assertMs('timeout', timeout, { positive: true });
    options.signal?.throwIfAborted();

    const timer = AbortSignal.timeout(Math.max(1, Math.ceil(timeout)));
    const signal = options.signal ? AbortSignal.any([options.signal, timer]) : timer;
    const headers: Record<string, string> = { accept, 'user-agent': USER_AGENT };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const where = { method, url: url.href, address };

    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const response = await request(url, { method, headers, body, signal, dispatcher: this.#dispatcher });
      status = response.statusCode;
      const header = response.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
      text = await response.body.text();
    } catch (error) {
      options.signal?.throwIfAborted();
      throw noAnswerError(where, error, timer.aborted, timeout);
    }

    if (status >= 200 && status < 300) return { ...where, status, text };

    let slug = `http_${status}`;
    let serverMessage: string | undefined;
    try {
      const body = JSON.parse(text) as unknown;
      if (body && typeof body === 'object') {
        const { error, message } = body as { error?: unknown; message?: unknown };
        if (typeof error === 'string' && error) slug = error;
        if (typeof message === 'string') serverMessage = message;
      }
    } catch {
      serverMessage = text.trim().slice(0, 200) || undefined;
    }
    throw new MailroomApiError({
      ...where,
      status,
      slug,
      serverMessage,
      retryAfterMs: status === 429 ? parseRetryAfter(retryAfter) : undefined,
    });
  }
}

/**
 * `Retry-After` in ms: whole seconds per the contract (an HTTP date is
 * accepted too). Missing or unreadable means the floor, one second.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number {
  if (value === undefined) return 1000;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.max(0, Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}

export function normalizeApiURL(value: unknown): string {
  let url: URL;
  try {
    url = new URL(value instanceof URL ? value.href : String(value));
  } catch {
    throw expectedError('apiURL', `an http(s) URL like "${DEFAULT_API_URL}"`, value);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw expectedError('apiURL', `an http(s) URL like "${DEFAULT_API_URL}"`, String(value));
  }
  const trimmed = url.pathname.replace(/\/+$/, '');
  const path = trimmed.endsWith(API_BASE) ? trimmed.slice(0, -API_BASE.length) : trimmed;
  return `${url.origin}${path}`;
}
