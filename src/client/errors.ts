// The base of mailroom's one error family, and the errors of a single call:
// every error names its slug, and the address when there is one. The errors
// of a wait that gives up build on these (inbox/wait-errors.ts).

export interface MailroomErrorOptions {
  readonly slug: string;
  readonly status?: number | undefined;
  readonly address?: string | undefined;
  readonly cause?: unknown;
}

/** The base of every error mailroom throws on purpose. Branch on `slug`. */
export class MailroomError extends Error {
  override name = 'MailroomError';
  /** Stable machine-readable reason, e.g. `unknown_domain`, `mail_timeout`. */
  readonly slug: string;
  /** The HTTP status, when an answer carried one. */
  readonly status: number | undefined;
  readonly address: string | undefined;

  constructor(message: string, options: MailroomErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.slug = options.slug;
    this.status = options.status;
    this.address = options.address;
  }
}

const HINTS: Readonly<Record<string, string>> = {
  unknown_domain: 'This service does not serve that domain, so no mail can ever arrive there. Check MAILROOM_DOMAIN or the `domain` option.',
  invalid_address: 'The address can never receive mail. Check how it was built.',
  invalid_request: 'A parameter was malformed; this is a bug in the caller or a service that speaks another contract.',
  unauthorized: 'The service wants a token. Set MAILROOM_TOKEN or the `token` option.',
  not_found: 'The message expired or was deleted.',
  rate_limited: 'The address spent its budget of one list call per second.',
};

export interface ApiErrorOptions extends MailroomErrorOptions {
  readonly status: number;
  readonly method: string;
  readonly url: string;
  readonly serverMessage?: string | undefined;
  readonly retryAfterMs?: number | undefined;
}

/** The service answered with a refusal: a non-2xx status and its slug. */
export class MailroomApiError extends MailroomError {
  override name = 'MailroomApiError';
  declare readonly status: number;
  readonly method: string;
  readonly url: string;
  /** The service's free text; may change, never branch on it. */
  readonly serverMessage: string | undefined;
  /** From `Retry-After`, in milliseconds (429 only). */
  readonly retryAfterMs: number | undefined;

  constructor(options: ApiErrorOptions) {
    const said = options.serverMessage ? ` (${JSON.stringify(options.serverMessage)})` : '';
    const hint = HINTS[options.slug];
    super(`${options.method} ${options.url} was refused: ${options.status} ${options.slug}${said}.${hint ? ` ${hint}` : ''}`, options);
    this.method = options.method;
    this.url = options.url;
    this.serverMessage = options.serverMessage;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export interface NetworkErrorOptions extends MailroomErrorOptions {
  readonly slug: 'network_error' | 'request_timeout' | 'invalid_response';
  readonly method: string;
  readonly url: string;
  readonly detail: string;
}

/**
 * No usable answer: the connection failed or was cut, the request timed
 * out, or the body was not what the contract says. Always transient.
 */
export class MailroomNetworkError extends MailroomError {
  override name = 'MailroomNetworkError';
  declare readonly slug: 'network_error' | 'request_timeout' | 'invalid_response';
  readonly method: string;
  readonly url: string;

  constructor(options: NetworkErrorOptions) {
    super(`${options.method} ${options.url} failed: ${options.detail}`, options);
    this.method = options.method;
    this.url = options.url;
  }
}

/**
 * The error for a request that got no answer: its own timeout of
 * `timeoutMs` ran out (`timedOut`), or the network failed it. The embedded
 * server's client and the catchers' drivers say it in the same words.
 */
export function noAnswerError(
  where: { readonly method: string; readonly url: string; readonly address?: string | undefined },
  error: unknown,
  timedOut: boolean,
  timeoutMs: number,
): MailroomNetworkError {
  if (timedOut) {
    return new MailroomNetworkError({
      ...where,
      slug: 'request_timeout',
      detail: `no complete answer within the request timeout of ${Math.round(timeoutMs)} ms`,
      cause: error,
    });
  }
  return new MailroomNetworkError({ ...where, slug: 'network_error', detail: describeNetworkError(error), cause: error });
}

/** The error's message, its cause's, and its code when the message does not say it. */
function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}${typeof code === 'string' && !error.message.includes(code) ? ` (${code})` : ''}`;
}

/**
 * True for failures that waiting may cure: 429, 5xx, network trouble, and a
 * request that timed out - or had no time left to start (`request_timeout`).
 * Every other refusal means stop: waiting cannot change the answer.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof MailroomNetworkError) return true;
  if (error instanceof MailroomError && error.slug === 'request_timeout') return true;
  if (error instanceof MailroomApiError) return error.status === 429 || error.status >= 500;
  return false;
}

/** Anything thrown, as an Error. */
export function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
