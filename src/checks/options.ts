// The options of `mail.check()` and `toPassMailChecks`, checked once, here,
// so a misspelt key or a bad limit is an error naming it instead of a check
// that silently runs with its default.
import { allowEntryProblem } from '../contract/destinations.js';
import { describeValue, expectedError } from '../contract/validation.js';
import { CHECK_NAMES, type CheckName, type ExtraCheck } from './problem.js';

/**
 * A cookie as Playwright's `context.cookies()` lists it, sent as a browser
 * would: `domain` without a leading dot is host-only (that host alone), with
 * one (`.example.com`) also its subdomains; `path` (default `/`) and its
 * subpaths only; `secure` only over https (or to a loopback host, as
 * Chromium does). A cookie without a domain is the link's own, like the
 * `name → value` record.
 */
export interface LinkCookie {
  readonly name: string;
  readonly value: string;
  readonly domain?: string;
  readonly path?: string;
  readonly secure?: boolean;
}

export interface LinkCheckOptions {
  /** Links not to fetch: a string is a case-insensitive part of the URL, a RegExp is tested on it. */
  readonly skip?: readonly (string | RegExp)[];
  /**
   * Headers (e.g. `authorization`) sent to each link's own origin, as
   * written in the mail; dropped from a redirect to another origin, as
   * fetch() drops `authorization`.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Cookies: a `name → value` record, sent like `headers` to each link's own
   * origin, or `context.cookies()`, each sent where a browser would send it
   * (see LinkCookie), redirects included.
   */
  readonly cookies?: Readonly<Record<string, string>> | readonly LinkCookie[];
  /** How long one request may take, in ms (default 5000). */
  readonly timeout?: number;
  /** Requests at once (default 4). */
  readonly concurrency?: number;
  /** Redirects followed before giving up (default 5). */
  readonly maxRedirects?: number;
  /** Distinct links fetched at most (default 100); the rest are one warning. */
  readonly maxLinks?: number;
  /** How long the whole links check may take, in ms (default 30000); links not fetched by then are one warning. */
  readonly totalTimeout?: number;
  /**
   * The loopback and private hosts links may reach (localhost, 10/8,
   * 172.16/12, 192.168/16, 100.64/10, fc00::/7): `'all'` (the default: a
   * test's app runs on localhost), or only these host names, addresses and
   * CIDRs (the server's `--link-check-allow`). Public hosts are always
   * reached; link-local addresses and the clouds' metadata services never,
   * redirects included.
   */
  readonly allowPrivate?: 'all' | readonly string[];
}

/**
 * A feature the team knowingly uses: its problems become warnings that
 * carry the reason (`as: 'warning'`, the default), or are left out of the
 * report (`as: 'ignore'`). The support score still counts it.
 */
export interface AcceptedFeature {
  /** caniemail's slug, as in its page's URL (`css-display-flex`), or the feature as a problem names it (`display:flex`). */
  readonly feature: string;
  /** Why, for the next person who reads the report. */
  readonly reason: string;
  readonly as?: 'warning' | 'ignore';
}

export interface HtmlCheckOptions {
  /**
   * The clients to check against: families (`gmail`, `outlook`, `apple-mail`,
   * `yahoo`, `samsung-email`, `thunderbird`, `protonmail`, `fastmail`, …) or
   * caniemail's names and globs (`outlook.windows`, `*.ios`). Default: gmail,
   * outlook, apple-mail, yahoo.
   */
  readonly clients?: readonly string[];
  /** Features the team accepts, each with its reason. */
  readonly accept?: readonly AcceptedFeature[];
}

export interface SizeCheckOptions {
  /** HTML bytes past which Gmail clips the mail (default 102 KiB): an error. */
  readonly clipBytes?: number;
  /** Bytes of the whole message past which it is too big for some servers (default 10 MiB): a warning. */
  readonly maxBytes?: number;
}

export interface MailCheckOptions {
  /** Run only these checks. */
  readonly only?: readonly CheckName[];
  /** Run every check but these. */
  readonly skip?: readonly CheckName[];
  readonly links?: LinkCheckOptions;
  readonly html?: HtmlCheckOptions;
  readonly size?: SizeCheckOptions;
  /** Checks run beside the built-in ones, e.g. the Playwright adapter's `accessibilityCheck(page)`. */
  readonly with?: readonly ExtraCheck[];
  /** Stops the link requests (and any extra check that listens). */
  readonly signal?: AbortSignal;
}

export const DEFAULT_CLIENTS: readonly string[] = ['gmail', 'outlook', 'apple-mail', 'yahoo'];
export const DEFAULT_CLIP_BYTES = 102 * 1024;
export const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_LINK_TIMEOUT_MS = 5_000;
export const DEFAULT_LINK_CONCURRENCY = 4;
export const DEFAULT_MAX_REDIRECTS = 5;
export const DEFAULT_MAX_LINKS = 100;
export const DEFAULT_LINKS_TOTAL_TIMEOUT_MS = 30_000;

const TOP_KEYS = ['only', 'skip', 'links', 'html', 'size', 'with', 'signal'];
const LINK_KEYS = ['skip', 'headers', 'cookies', 'timeout', 'concurrency', 'maxRedirects', 'maxLinks', 'totalTimeout', 'allowPrivate'];

/** Throws a TypeError naming the first bad option; `extraKeys` are the caller's own (the matcher's `failOn`). */
export function validateCheckOptions(options: unknown, extraKeys: readonly string[] = []): MailCheckOptions {
  if (options === undefined) return {};
  const o = record('options', options, [...TOP_KEYS, ...extraKeys]);
  for (const key of ['only', 'skip'] as const) {
    const names = o[key];
    if (names === undefined) continue;
    if (!Array.isArray(names)) throw expectedError(key, `an array of check names (${CHECK_NAMES.join(', ')})`, names);
    for (const name of names as unknown[]) {
      if (!CHECK_NAMES.includes(name as CheckName)) throw expectedError(`${key}[]`, `a check name (${CHECK_NAMES.join(', ')})`, name);
    }
  }
  if (o.links !== undefined) {
    const links = record('links', o.links, LINK_KEYS);
    if (links.skip !== undefined && !(Array.isArray(links.skip) && links.skip.every((p) => typeof p === 'string' || p instanceof RegExp)))
      throw expectedError('links.skip', 'an array of strings and RegExps', links.skip);
    if (links.headers !== undefined) stringRecord('links.headers', links.headers);
    if (links.cookies !== undefined && !Array.isArray(links.cookies)) stringRecord('links.cookies', links.cookies);
    if (Array.isArray(links.cookies)) {
      for (const cookie of links.cookies as unknown[]) {
        const c = cookie as Partial<LinkCookie> | null;
        if (
          c === null ||
          typeof c !== 'object' ||
          typeof c.name !== 'string' ||
          typeof c.value !== 'string' ||
          !['string', 'undefined'].includes(typeof c.domain) ||
          !['string', 'undefined'].includes(typeof c.path) ||
          !['boolean', 'undefined'].includes(typeof c.secure)
        )
          throw expectedError('links.cookies[]', 'a { name, value, domain?, path?, secure? } cookie', cookie);
      }
    }
    positive('links.timeout', links.timeout);
    whole('links.concurrency', links.concurrency, 1);
    whole('links.maxRedirects', links.maxRedirects, 0);
    whole('links.maxLinks', links.maxLinks, 1);
    positive('links.totalTimeout', links.totalTimeout);
    const allow = links.allowPrivate;
    if (allow !== undefined && allow !== 'all') {
      if (!Array.isArray(allow) || !allow.every((entry) => typeof entry === 'string'))
        throw expectedError('links.allowPrivate', "'all' or an array of host names, addresses and CIDRs", allow);
      for (const entry of allow) {
        const wrong = allowEntryProblem(entry);
        if (wrong) throw new TypeError(`Expected \`links.allowPrivate[]\` to be a host name, an address or a CIDR, got ${JSON.stringify(entry)}: ${wrong}`);
      }
    }
  }
  if (o.html !== undefined) {
    const html = record('html', o.html, ['clients', 'accept']);
    if (html.clients !== undefined && !(Array.isArray(html.clients) && html.clients.length > 0 && html.clients.every((c) => typeof c === 'string')))
      throw expectedError('html.clients', 'a non-empty array of client names (gmail, outlook, apple-mail, yahoo, …)', html.clients);
    if (html.accept !== undefined) {
      if (!Array.isArray(html.accept)) throw expectedError('html.accept', "an array of { feature, reason, as? } (as: 'warning' or 'ignore')", html.accept);
      html.accept.forEach((entry: unknown, i: number) => {
        const name = `html.accept[${i}]`;
        const accepted = record(name, entry, ['feature', 'reason', 'as']);
        if (typeof accepted.feature !== 'string' || accepted.feature.trim() === '')
          throw expectedError(`${name}.feature`, "a caniemail feature's slug (css-display-flex) or name (display:flex)", accepted.feature);
        if (typeof accepted.reason !== 'string' || accepted.reason.trim() === '')
          throw expectedError(`${name}.reason`, 'a sentence saying why the mail may use it', accepted.reason);
        if (accepted.as !== undefined && accepted.as !== 'warning' && accepted.as !== 'ignore')
          throw expectedError(`${name}.as`, '"warning" or "ignore"', accepted.as);
      });
    }
  }
  if (o.size !== undefined) {
    const size = record('size', o.size, ['clipBytes', 'maxBytes']);
    whole('size.clipBytes', size.clipBytes, 1);
    whole('size.maxBytes', size.maxBytes, 1);
  }
  if (o.with !== undefined) {
    if (!Array.isArray(o.with)) throw expectedError('with', 'an array of checks', o.with);
    for (const extra of o.with as unknown[]) {
      const e = extra as Partial<ExtraCheck> | null;
      if (e === null || typeof e !== 'object' || !CHECK_NAMES.includes(e.name as CheckName) || typeof e.run !== 'function')
        throw expectedError('with[]', 'a check ({ name, run })', extra);
    }
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw expectedError('signal', 'an AbortSignal', o.signal);
  return o;
}

function record(name: string, value: unknown, keys: readonly string[]): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new TypeError(`Expected mail check ${name} to be an object, got ${describeValue(value)}`);
  for (const key of Object.keys(value)) {
    if (!keys.includes(key))
      throw new TypeError(`Unknown mail check option \`${name === 'options' ? key : `${name}.${key}`}\`; expected one of ${keys.join(', ')}`);
  }
  return value as Record<string, unknown>;
}

function stringRecord(name: string, value: unknown): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string'))
    throw expectedError(name, 'a record of strings', value);
}

function positive(name: string, value: unknown): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0))
    throw expectedError(name, 'a positive number of milliseconds', value);
}

function whole(name: string, value: unknown, min: number): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value >= min))
    throw expectedError(name, `a whole number from ${min}`, value);
}
