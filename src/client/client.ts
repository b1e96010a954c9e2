// The mailbox service's HTTP API, one method per call of the contract.
//
// Thin on purpose: no retries, no pacing, no waiting - those belong to the
// wait loop (wait.ts), which knows the deadline. What this class does is
// give every request a timeout, and turn every answer into either a typed
// value or a typed error: a refusal carries its slug, a broken answer is a
// network error, never a stray `TypeError` three frames away.
import { request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { MailroomApiError, MailroomNetworkError, isTransient } from './errors.js';
import type { MessageDetail } from '../inbox/mail.js';
import type { MailSummary } from './messages.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
/** The most a list call may ask for (the contract allows 1..100). */
export const MAX_LIST_LIMIT = 100;
const API_PATH = '/api/v1';
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
}

export interface MailboxListing {
  readonly address: string;
  /** Newest first, as the service lists them. */
  readonly messages: readonly MailSummary[];
}

/** What a service advertises beyond the contract's calls (`GET /healthz` → `features`). */
export interface ServiceFeatures {
  /** The path of the long-poll (`GET /api/v1/mailbox/wait`), when the service offers one. */
  readonly wait: string | undefined;
}

/** The most a service holds a long-poll (the seed's ceiling). */
export const MAX_HOLD_MS = 25_000;

export interface WaitForMailOptions extends CallOptions {
  /** Answer once a message newer than this id is in the mailbox; any message counts when omitted. */
  readonly sinceId?: string | undefined;
  /** How long the service may hold the request, in ms (at most 25 s; more is clamped). */
  readonly holdMs: number;
  /** How many of the newest messages the answer lists, 1..100 (the service's default is 25). */
  readonly limit?: number | undefined;
  /** The long-poll's path, as `features()` found it. */
  readonly path: string;
}

export interface WaitListing extends MailboxListing {
  /** True when the hold ended because its time was up, not because mail came. */
  readonly timedOut: boolean;
}

export class MailroomClient {
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
    assertTimeout('requestTimeout', this.requestTimeout);
    if (options.token !== undefined && (typeof options.token !== 'string' || options.token === '')) {
      throw new TypeError('Expected `token` to be a non-empty string');
    }
    this.#token = options.token;
    this.#dispatcher = options.dispatcher;
  }

  /** `GET /mailbox?address=A&limit=N`: the newest messages, newest first. */
  async listMessages(address: string, options: ListOptions = {}): Promise<MailboxListing> {
    const query: Record<string, string> = { address };
    if (options.limit !== undefined) {
      if (!Number.isInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_LIMIT) {
        throw new TypeError(`Expected \`limit\` to be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(options.limit)}`);
      }
      query.limit = String(options.limit);
    }
    const answer = await this.#send('GET', `${API_PATH}/mailbox`, query, address, options);
    const listing = parseBody(answer, Listing);
    return { address: listing.address ?? address, messages: listing.messages };
  }

  /** `GET /message/{id}?mailbox=A`: the full message. */
  async getMessage(address: string, id: string, options: CallOptions = {}): Promise<MessageDetail> {
    const answer = await this.#send('GET', `${API_PATH}/message/${encodeURIComponent(id)}`, { mailbox: address }, address, options);
    return parseBody(answer, Detail);
  }

  /** `GET /message/{id}/raw?mailbox=A`: the source as received. */
  async getRawMessage(address: string, id: string, options: CallOptions = {}): Promise<string> {
    const answer = await this.#send('GET', `${API_PATH}/message/${encodeURIComponent(id)}/raw`, { mailbox: address }, address, options, 'message/rfc822');
    return answer.text;
  }

  /** `DELETE /message/{id}?mailbox=A`: idempotent; false when it was already gone. */
  async deleteMessage(address: string, id: string, options: CallOptions = {}): Promise<boolean> {
    const answer = await this.#send('DELETE', `${API_PATH}/message/${encodeURIComponent(id)}`, { mailbox: address }, address, options);
    return parseBody(answer, z.object({ deleted: z.boolean() })).deleted;
  }

  /** `DELETE /mailbox?address=A`: idempotent; how many messages went. */
  async deleteMailbox(address: string, options: CallOptions = {}): Promise<number> {
    const answer = await this.#send('DELETE', `${API_PATH}/mailbox`, { address }, address, options);
    return parseBody(answer, z.object({ deleted: z.number() })).deleted;
  }

  /**
   * The features the service advertises in `GET /healthz`, asked once and
   * remembered. A service that does not advertise one (or has no /healthz,
   * or answers something else) simply has none; a transient failure says
   * "none" this time and asks again next time.
   */
  features(options: CallOptions = {}): Promise<ServiceFeatures> {
    this.#features ??= this.#send('GET', '/healthz', {}, undefined, options).then(
      (answer) => {
        const parsed = Health.safeParse(safeJson(answer.text));
        const wait = parsed.success ? parsed.data.features?.wait : undefined;
        return Object.freeze({ wait: typeof wait === 'string' && wait.startsWith('/') ? wait : undefined });
      },
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
    if (!Number.isFinite(holdMs)) throw new TypeError(`Expected \`holdMs\` to be a number of milliseconds, got ${String(options.holdMs)}`);
    const query: Record<string, string> = { address, timeout: (Math.ceil(holdMs) / 1000).toFixed(3) };
    if (options.sinceId !== undefined) query.since_id = options.sinceId;
    if (options.limit !== undefined) query.limit = String(options.limit);
    const timeout = options.timeout ?? holdMs + this.requestTimeout;
    const answer = await this.#send('GET', options.path, query, address, { timeout, signal: options.signal });
    const listing = parseBody(answer, WaitAnswer);
    return { address: listing.address ?? address, messages: listing.messages, timedOut: listing.timed_out };
  }

  /** `GET /healthz`: true when the service says it is ok. */
  async health(options: CallOptions = {}): Promise<boolean> {
    const answer = await this.#send('GET', '/healthz', {}, undefined, options);
    return parseBody(answer, z.object({ ok: z.boolean() })).ok;
  }

  async #send(
    method: 'GET' | 'DELETE',
    path: string,
    query: Record<string, string>,
    address: string | undefined,
    options: CallOptions,
    accept = 'application/json',
  ): Promise<Answer> {
    const url = new URL(this.apiURL + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    const timeout = options.timeout ?? this.requestTimeout;
    assertTimeout('timeout', timeout);
    options.signal?.throwIfAborted();

    const timer = AbortSignal.timeout(Math.max(1, Math.ceil(timeout)));
    const signal = options.signal ? AbortSignal.any([options.signal, timer]) : timer;
    const headers: Record<string, string> = { accept, 'user-agent': USER_AGENT };
    if (this.#token) headers.authorization = `Bearer ${this.#token}`;
    const where = { method, url: url.href, address };

    let status: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      const response = await request(url, { method, headers, signal, dispatcher: this.#dispatcher });
      status = response.statusCode;
      const header = response.headers['retry-after'];
      retryAfter = Array.isArray(header) ? header[0] : header;
      text = await response.body.text();
    } catch (error) {
      options.signal?.throwIfAborted();
      if (timer.aborted) {
        throw new MailroomNetworkError({ ...where, slug: 'request_timeout', detail: `no complete answer within the request timeout of ${Math.round(timeout)} ms`, cause: error });
      }
      throw new MailroomNetworkError({ ...where, slug: 'network_error', detail: describeNetworkError(error), cause: error });
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

interface Answer {
  readonly method: string;
  readonly url: string;
  readonly address: string | undefined;
  readonly status: number;
  readonly text: string;
}

function parseBody<T>(answer: Answer, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch (error) {
    throw new MailroomNetworkError({ ...answer, slug: 'invalid_response', detail: `answered ${answer.status} with a body that is not JSON: ${JSON.stringify(answer.text.slice(0, 120))}`, cause: error });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at \`${issue.path.join('.')}\`` : '';
    throw new MailroomNetworkError({ ...answer, slug: 'invalid_response', detail: `answered ${answer.status} with a body the contract does not describe${at}: ${issue?.message ?? 'invalid'}`, cause: parsed.error });
  }
  return parsed.data;
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
    throw new TypeError(`Expected \`apiURL\` to be an http(s) URL like "http://127.0.0.1:8025", got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`Expected \`apiURL\` to be an http(s) URL like "http://127.0.0.1:8025", got ${JSON.stringify(String(value))}`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${url.origin}${path}`;
}

function assertTimeout(name: string, value: unknown): void {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value)) {
    throw new TypeError(`Expected \`${name}\` to be a positive number of milliseconds, got ${String(value)}`);
  }
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}${typeof code === 'string' && !error.message.includes(code) ? ` (${code})` : ''}`;
}

// The wire shapes, checked once at the edge and turned into the core's own.
const Id = z.union([z.string().min(1), z.number()]).transform(String);
const Text = z.string().nullish().transform((s) => s ?? '');
const Addresses = z.union([z.array(z.string()), z.string(), z.null(), z.undefined()]).transform((v) => (v == null ? [] : Array.isArray(v) ? v : [v]));
const Timestamp = z.string().transform((s, ctx) => {
  const date = new Date(s);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: 'custom', message: `not an RFC 3339 timestamp: ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return date;
});

const SummaryFields = {
  id: Id,
  from: Text,
  to: Addresses,
  subject: Text,
  preview: Text,
  received_at: Timestamp,
  size: z.number().nullish().transform((n) => n ?? 0),
};

function toSummary(s: { id: string; from: string; to: string[]; subject: string; preview: string; received_at: Date; size: number }): MailSummary {
  return Object.freeze({ id: s.id, from: s.from, to: Object.freeze(s.to), subject: s.subject, preview: s.preview, receivedAt: s.received_at, size: s.size });
}

const Listing = z.object({
  address: z.string().optional(),
  messages: z.array(z.object(SummaryFields).transform(toSummary)),
});

const WaitAnswer = Listing.extend({ timed_out: z.boolean() });

const Health = z.object({ features: z.object({ wait: z.unknown().optional() }).nullish() });
const NO_FEATURES: ServiceFeatures = Object.freeze({ wait: undefined });

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const Detail = z
  .object({
    ...SummaryFields,
    message_id: z.string().nullish(),
    cc: Addresses,
    date: z.string().nullish(),
    headers: z.record(z.string(), z.union([z.array(z.string()), z.string()])).nullish(),
    text: Text,
    html: Text,
    attachments: z
      .array(
        z.object({
          filename: z.string().nullish(),
          content_type: z.string().nullish(),
          size: z.number().nullish(),
          content_id: z.string().nullish(),
        }),
      )
      .nullish(),
  })
  .transform((m): MessageDetail => {
    const date = m.date ? new Date(m.date) : null;
    return {
      ...toSummary(m),
      messageId: m.message_id ?? null,
      cc: m.cc,
      date: date && !Number.isNaN(date.getTime()) ? date : null,
      headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v : [v]])),
      text: m.text,
      html: m.html,
      attachments: (m.attachments ?? []).map((a) => ({
        filename: a.filename ?? null,
        contentType: a.content_type ?? 'application/octet-stream',
        size: a.size ?? 0,
        contentId: a.content_id ?? null,
      })),
    };
  });
