// One HTTP call to a mail catcher (maildev, Mailpit): a timeout on every
// request, basic auth when configured, and every answer turned into text or
// the client's typed errors, as client/client.ts does for the embedded
// server. A catcher's refusals carry no slug of the contract, so the status
// gives one: 404 `not_found`, 401 `unauthorized`, 5xx `unavailable`.
import { request, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { MailroomApiError, MailroomNetworkError, noAnswerError } from '../client/errors.js';
import { assertMs } from '../contract/validation.js';

export interface BasicCredentials {
  readonly username: string;
  readonly password: string;
}

export interface CatcherHttpOptions {
  /** The catcher's web address, normalised, without credentials. */
  readonly baseURL: string;
  readonly credentials: BasicCredentials | undefined;
  readonly requestTimeout: number;
  readonly dispatcher?: Dispatcher | undefined;
}

export interface CatcherCall {
  readonly method: 'GET' | 'DELETE' | 'POST' | 'PUT';
  /** The path below the base URL, with its query. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>> | undefined;
  /** Sent as JSON. */
  readonly json?: unknown;
  readonly address?: string | undefined;
  readonly timeout?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

const USER_AGENT = 'mailroom-client/0.1';

const SLUG_BY_STATUS: Readonly<Record<number, string>> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'unauthorized',
  404: 'not_found',
  429: 'rate_limited',
};

export class CatcherHttp {
  readonly baseURL: string;
  readonly requestTimeout: number;
  readonly #authorization: string | undefined;
  readonly #dispatcher: Dispatcher | undefined;

  constructor(options: CatcherHttpOptions) {
    this.baseURL = options.baseURL;
    this.requestTimeout = options.requestTimeout;
    this.#dispatcher = options.dispatcher;
    const c = options.credentials;
    this.#authorization = c ? `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}` : undefined;
  }

  /** The headers every call carries (the push stream's handshake too). */
  headers(): Record<string, string> {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT };
    if (this.#authorization) headers.authorization = this.#authorization;
    return headers;
  }

  /** The answer's body as text; a non-2xx answer throws `MailroomApiError`, no answer `MailroomNetworkError`. */
  async text(call: CatcherCall): Promise<string> {
    const url = new URL(this.baseURL + call.path);
    for (const [key, value] of Object.entries(call.query ?? {})) url.searchParams.set(key, value);
    const timeout = call.timeout ?? this.requestTimeout;
    assertMs('timeout', timeout, { positive: true });
    call.signal?.throwIfAborted();
    const timer = AbortSignal.timeout(Math.max(1, Math.ceil(timeout)));
    const signal = call.signal ? AbortSignal.any([call.signal, timer]) : timer;
    const headers = this.headers();
    let body: string | undefined;
    if (call.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(call.json);
    }
    const where = { method: call.method, url: url.href, address: call.address };
    let status: number;
    let text: string;
    try {
      const response = await request(url, { method: call.method, headers, body, signal, dispatcher: this.#dispatcher });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      call.signal?.throwIfAborted();
      throw noAnswerError(where, error, timer.aborted, timeout);
    }
    if (status >= 200 && status < 300) return text;
    const slug = SLUG_BY_STATUS[status] ?? (status >= 500 ? 'unavailable' : `http_${status}`);
    throw new MailroomApiError({ ...where, status, slug, serverMessage: text.trim().slice(0, 200) || undefined });
  }

  /** The answer's body parsed as JSON; a body that is not JSON is an `invalid_response`. */
  async json(call: CatcherCall): Promise<unknown> {
    const text = await this.text(call);
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      throw new MailroomNetworkError({
        method: call.method,
        url: this.baseURL + call.path,
        address: call.address,
        slug: 'invalid_response',
        detail: `answered with a body that is not JSON: ${JSON.stringify(text.slice(0, 120))}`,
        cause: error,
      });
    }
  }
}

/** A catcher's JSON answer checked against what its API says; anything else is an `invalid_response` naming the field. */
export function parseAnswer<T>(json: unknown, schema: z.ZodType<T>, url: string, catcher: string): T {
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new MailroomNetworkError({
    method: 'GET',
    url,
    slug: 'invalid_response',
    detail: `${catcher} answered a body its API does not describe${issue?.path.length ? ` at \`${issue.path.join('.')}\`` : ''}: ${issue?.message ?? 'invalid'}`,
  });
}
