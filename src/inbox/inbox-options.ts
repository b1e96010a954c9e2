// Inbox options: validated at the edge, defaulted in one place, frozen.
import { DEFAULT_REQUEST_TIMEOUT_MS, MailroomClient, normalizeApiURL } from '../client/client.js';
import { DEFAULT_API_URL, DEFAULT_DOMAIN } from '../contract/defaults.js';
import { assertMs, blankToUndefined } from '../contract/validation.js';
import { systemClock, systemRandom, type Clock, type RandomSource } from '../wait/clock.js';
import { normalizeDomain, sanitizePrefix, validateAddress } from './address.js';
import type { HandledStore } from './handled.js';

/** The default budget of `expectMail`. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The default quiet period of `expectNoMail`. */
export const DEFAULT_QUIET_MS = 5_000;

export interface ConnectionOptions {
  /** Default: `MAILROOM_API_URL`, else `http://127.0.0.1:8025`. */
  readonly apiURL?: string | URL | undefined;
  /** Domain of fresh addresses. Default: `MAILROOM_DOMAIN`, else `mailroom.test`. */
  readonly domain?: string | undefined;
  /** Bearer token. Default: `MAILROOM_TOKEN`, else none. */
  readonly token?: string | undefined;
  /** Timeout of one HTTP request, in ms (default 5 s). */
  readonly requestTimeout?: number | undefined;
}

export interface ResolvedConnection {
  readonly apiURL: string;
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
  return Object.freeze({
    apiURL: normalizeApiURL(options.apiURL ?? fromEnv(env.MAILROOM_API_URL) ?? DEFAULT_API_URL),
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
  readonly client: MailroomClient | undefined;
  readonly handled: HandledStore | undefined;
  /** Use the service's long-poll when it advertises one. */
  readonly serverWait: boolean;
  readonly clock: Clock;
  readonly random: RandomSource;
}

export function resolveInboxOptions(options: Record<string, unknown> & ConnectionOptions, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedInboxOptions {
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
  if (client !== undefined && !(client instanceof MailroomClient)) throw new TypeError('Expected `client` to be a MailroomClient');
  const handled = options.handled as HandledStore | undefined;
  if (handled !== undefined && (typeof handled?.has !== 'function' || typeof handled?.add !== 'function')) {
    throw new TypeError('Expected `handled` to be a store with has(address, id) and add(address, id), e.g. openHandledStore(path)');
  }
  const serverWait = options.serverWait ?? parseSwitch('MAILROOM_SERVER_WAIT', env.MAILROOM_SERVER_WAIT) ?? true;
  if (typeof serverWait !== 'boolean') throw new TypeError(`Expected \`serverWait\` to be a boolean, got ${typeof serverWait}`);
  const clock = (options.clock as Clock | undefined) ?? systemClock;
  if (typeof clock.now !== 'function' || typeof clock.sleep !== 'function') throw new TypeError('Expected `clock` to have now() and sleep(ms, signal)');
  const random = (options.random as RandomSource | undefined) ?? systemRandom;
  if (typeof random !== 'function') throw new TypeError('Expected `random` to be a function returning a number in [0, 1)');
  return Object.freeze({
    ...connection,
    apiURL: client?.apiURL ?? connection.apiURL,
    requestTimeout: client && options.requestTimeout === undefined ? client.requestTimeout : connection.requestTimeout,
    address,
    prefix: prefix as string | undefined,
    timeout,
    watermark: watermark as string | null | undefined,
    client,
    handled,
    serverWait,
    clock,
    random,
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

/** An environment variable's value, trimmed; undefined when unset or blank. */
function fromEnv(value: string | undefined): string | undefined {
  return blankToUndefined(value)?.trim();
}
