// Inbox options: validated at the edge, defaulted in one place, frozen.
import { DEFAULT_REQUEST_TIMEOUT_MS, normalizeApiURL } from '../client/client.js';
import { DEFAULT_BACKEND_URLS, isMailBackend, type BackendName, type MailBackend } from '../backends/backend.js';
import type { BasicCredentials } from '../backends/catcher-http.js';
import { credentialsInURL, parseBackendName, parseCredentials } from '../backends/choose.js';
import { DEFAULT_API_URL, DEFAULT_DOMAIN } from '../contract/defaults.js';
import { assertMs, expectedError, fromEnv } from '../contract/validation.js';
import { systemClock, systemRandom, type Clock, type RandomSource } from '../wait/clock.js';
import { normalizeDomain, sanitizePrefix } from '../contract/fresh-address.js';
import { validateAddress } from './address.js';
import type { InboxEvent, WaitInfo } from './events.js';
import type { HandledStore } from './handled.js';

/** Options of `createInbox()`: where the service is (`ConnectionOptions`), which address, and how its waits behave. */
export interface InboxOptions extends ConnectionOptions {
  /** Use this address instead of a fresh one. */
  readonly address?: string | undefined;
  /** Readable start of a fresh address, e.g. the test's title. */
  readonly prefix?: string | undefined;
  /** Default budget of `expectMail`/`expectMails`, in ms (30 s). */
  readonly timeout?: number | undefined;
  /**
   * Skip the watermark read: a message id to count from, or `null` to count
   * every message already in the mailbox as new (for consumers draining a
   * mailbox with a `handled` store). Omit it to read the watermark now.
   */
  readonly watermark?: string | null | undefined;
  /** Share one client or backend (and its connection pool, its push stream) between inboxes. */
  readonly client?: MailBackend | undefined;
  /**
   * Let the service hold the wait (its long-poll) when it advertises one,
   * instead of polling: mail is seen the moment it arrives. Falls back to
   * polling on its own when the service has none, is full, or fails.
   * Default: `MAILROOM_SERVER_WAIT` (`0`/`false` turns it off), else true.
   */
  readonly serverWait?: boolean | undefined;
  /** Remember handled ids beyond this inbox, e.g. `openHandledStore(path)`. */
  readonly handled?: HandledStore | undefined;
  /** Observes every wait: start, each check, refusals, failures, the end. */
  readonly onEvent?: ((event: InboxEvent) => void) | undefined;
  /**
   * Wraps every wait, e.g. in a report step:
   * `aroundWait: (wait, run) => test.step(wait.title, run, { location: wait.calledFrom })`.
   */
  readonly aroundWait?: (<T>(wait: WaitInfo, run: () => Promise<T>) => Promise<T>) | undefined;
  /** Cancels the watermark read of `createInbox`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Asked at the start of every wait: a signal that ends it early with its
   * own failure text. Runner plugins pass one that fires shortly before the
   * test's own deadline, so a wait never dies of the runner's generic timeout;
   * saying when it fires (a `WaitCut`) lets a server-side wait end, answered,
   * just before it, so the check it made counts.
   */
  readonly waitSignal?: (() => AbortSignal | WaitCut | undefined) | undefined;
  /** A monotonic clock; only tests replace it. */
  readonly clock?: Clock | undefined;
  /** A random source in [0, 1); only tests replace it. */
  readonly random?: RandomSource | undefined;
}

/** A signal that cuts a wait short, and when it is due to fire. */
export interface WaitCut {
  readonly signal: AbortSignal;
  /** Milliseconds from when `waitSignal` was asked until `signal` fires. */
  readonly firesInMs: number;
  /**
   * How long the runner still waits after `signal` fires before it fails the
   * test itself. A wait that failed with nothing at all spends at most half
   * of it reading why (the attempt log); without it, it reads nothing once cut.
   */
  readonly spareMs?: number | undefined;
}

/** Options of one wait: `expectMail`, `expectMails` and `toReceiveMail`. */
export interface WaitOptions {
  /** Budget in ms; the inbox's `timeout` (default 30 s) when omitted. */
  readonly timeout?: number | undefined;
  /** Ends the wait early (e.g. at the test's own deadline) with the same failure text. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of a quiet period: `expectNoMail` and `.not.toReceiveMail`. */
export interface QuietOptions {
  /** The quiet period in ms (default 5 s). */
  readonly within?: number | undefined;
  /** Ends the quiet period early, as a failure. */
  readonly signal?: AbortSignal | undefined;
}

/** The default budget of `expectMail`. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The default quiet period of `expectNoMail`. */
export const DEFAULT_QUIET_MS = 5_000;

/** Where the mailbox service is and how to reach it; each option falls back to its `MAILROOM_*` variable, then a default. */
export interface ConnectionOptions {
  /**
   * Where the mail is: mailroom's embedded server (`'mailroom'`), or a
   * catcher the team already runs (`'maildev'`, `'mailpit'`; docs/backends.md).
   * Default: `MAILROOM_BACKEND`, else `'mailroom'`.
   */
  readonly backend?: BackendName | undefined;
  /**
   * The mailbox API, or the catcher's web address. Default: `MAILROOM_API_URL`,
   * else `http://127.0.0.1:8025` (maildev: `http://127.0.0.1:1080`).
   */
  readonly apiURL?: string | URL | undefined;
  /** Basic auth for a catcher behind it (or `http://user:pass@host` in `apiURL`). */
  readonly credentials?: BasicCredentials | undefined;
  /** Domain of fresh addresses. Default: `MAILROOM_DOMAIN`, else `mailroom.test`. */
  readonly domain?: string | undefined;
  /** Bearer token. Default: `MAILROOM_TOKEN`, else none. */
  readonly token?: string | undefined;
  /** Timeout of one HTTP request, in ms (default 5 s). */
  readonly requestTimeout?: number | undefined;
}

export interface ResolvedConnection {
  readonly backend: BackendName;
  readonly apiURL: string;
  readonly credentials: BasicCredentials | undefined;
  readonly domain: string;
  readonly token: string | undefined;
  readonly requestTimeout: number;
}

/** Fills connection options from the environment, then the built-in defaults. */
export function resolveConnection(options: ConnectionOptions = {}, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedConnection {
  const token = options.token ?? fromEnv(env.MAILROOM_TOKEN);
  if (token !== undefined && (typeof token !== 'string' || token === '')) throw new TypeError('Expected `token` to be a non-empty string');
  const requestTimeout = options.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
  assertMs('requestTimeout', requestTimeout, { positive: true });
  const backend =
    options.backend === undefined
      ? env.MAILROOM_BACKEND?.trim()
        ? parseBackendName(env.MAILROOM_BACKEND, 'MAILROOM_BACKEND')
        : 'mailroom'
      : parseBackendName(options.backend);
  const rawURL = options.apiURL ?? fromEnv(env.MAILROOM_API_URL) ?? (backend === 'mailroom' ? DEFAULT_API_URL : DEFAULT_BACKEND_URLS[backend]);
  return Object.freeze({
    backend,
    credentials: parseCredentials(options.credentials) ?? credentialsInURL(rawURL),
    apiURL: normalizeApiURL(rawURL),
    domain: normalizeDomain(options.domain ?? fromEnv(env.MAILROOM_DOMAIN) ?? DEFAULT_DOMAIN),
    token,
    requestTimeout,
  });
}

export interface ResolvedInboxOptions extends ResolvedConnection {
  readonly address: string | undefined;
  readonly prefix: string | undefined;
  readonly timeout: number;
  readonly watermark: string | null | undefined;
  readonly client: MailBackend | undefined;
  readonly handled: HandledStore | undefined;
  /** Use the service's long-poll when it advertises one. */
  readonly serverWait: boolean;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly onEvent: InboxOptions['onEvent'];
  readonly aroundWait: InboxOptions['aroundWait'];
  readonly waitSignal: InboxOptions['waitSignal'];
}

export function resolveInboxOptions(
  options: Record<string, unknown> & ConnectionOptions,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedInboxOptions {
  const connection = resolveConnection(options, env);
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  assertMs('timeout', timeout);
  const address = options.address === undefined ? undefined : validateAddress(options.address);
  const prefix = options.prefix;
  if (prefix !== undefined) sanitizePrefix(prefix as string);
  const watermark = options.watermark;
  if (watermark !== undefined && watermark !== null && (typeof watermark !== 'string' || watermark === '')) {
    throw new TypeError('Expected `watermark` to be a message id, or null to count every message as new');
  }
  const client = options.client;
  if (client !== undefined && !isMailBackend(client)) throw new TypeError('Expected `client` to be a MailroomClient or a backend from createBackend()');
  const handled = options.handled as HandledStore | undefined;
  if (handled !== undefined && (typeof handled?.has !== 'function' || typeof handled?.add !== 'function')) {
    throw new TypeError('Expected `handled` to be a store with has(address, id) and add(address, id), e.g. openHandledStore(path)');
  }
  const serverWait = options.serverWait ?? parseSwitch('MAILROOM_SERVER_WAIT', env.MAILROOM_SERVER_WAIT) ?? true;
  if (typeof serverWait !== 'boolean') throw expectedError('serverWait', 'a boolean', serverWait);
  const clock = (options.clock as Clock | undefined) ?? systemClock;
  if (typeof clock.now !== 'function' || typeof clock.sleep !== 'function') throw new TypeError('Expected `clock` to have now() and sleep(ms, signal)');
  for (const hook of ['onEvent', 'aroundWait', 'waitSignal'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') throw new TypeError(`Expected \`${hook}\` to be a function`);
  }
  const hooks = options as Pick<InboxOptions, 'onEvent' | 'aroundWait' | 'waitSignal'>;
  const random = (options.random as RandomSource | undefined) ?? systemRandom;
  if (typeof random !== 'function') throw new TypeError('Expected `random` to be a function returning a number in [0, 1)');
  return Object.freeze({
    ...connection,
    backend: client?.backend ?? connection.backend,
    apiURL: client?.apiURL ?? connection.apiURL,
    requestTimeout: client && options.requestTimeout === undefined ? client.requestTimeout : connection.requestTimeout,
    address,
    prefix: prefix as string | undefined,
    timeout,
    watermark: watermark,
    client,
    handled,
    serverWait,
    clock,
    random,
    onEvent: hooks.onEvent,
    aroundWait: hooks.aroundWait,
    waitSignal: hooks.waitSignal,
  });
}

/** An on/off environment variable: 1/true/yes/on or 0/false/no/off; unset or empty is undefined. */
function parseSwitch(name: string, value: string | undefined): boolean | undefined {
  const v = fromEnv(value)?.toLowerCase();
  if (v === undefined) return undefined;
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new TypeError(`Expected ${name} to be 1 or 0 (true/false, yes/no, on/off), got ${JSON.stringify(value)}`);
}

/** Checks a wait's options: its budget is `budgetName`; anything else but `signal` is a typo. */
export function validateWaitOptions(options: unknown, budgetName: 'timeout' | 'within'): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`Expected wait options to be an object like { ${budgetName}: 10_000 }`);
  for (const key of Object.keys(options)) {
    if (key !== budgetName && key !== 'signal') {
      const hint = key === 'timeout' || key === 'within' ? `: this wait's budget is \`${budgetName}\`` : '';
      throw new TypeError(`Unknown wait option \`${key}\`${hint} (expected \`${budgetName}\` and \`signal\`)`);
    }
  }
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('Expected `signal` to be an AbortSignal');
}
