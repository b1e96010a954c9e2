// startServer's options: validated at the edge with messages that name the
// option and the value, defaulted in one place, then frozen for the internals.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { isDomainName } from '../contract/address.js';
import { allowEntryProblem } from '../contract/destinations.js';
import { DEFAULT_DOMAIN, DEFAULT_HOST, DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT } from '../contract/defaults.js';
import { MAX_WAIT_SECONDS } from '../contract/limits.js';
import type { RandomSource } from '../contract/random.js';
import type { WebhookEventType } from '../contract/webhooks.js';
import type { WebhookFormat } from '../contract/provider-events.js';
import { assertMs, expectedError } from '../contract/validation.js';
import type { WallClock } from './base/clock.js';
import { defaultLogger, type Logger } from './base/log.js';
import type { TlsCertificate } from './smtp/tls-certificate.js';
import { parseStoreLocation, type StoreLocation } from './store/store-location.js';

export interface ServerOptions {
  /** Interface both listeners bind to. Default `127.0.0.1` (loopback only). */
  host?: string;
  /** SMTP port; 0 picks any free port. Default 2525. */
  smtpPort?: number;
  /** HTTP API port; 0 picks any free port. Default 8025. */
  httpPort?: number;
  /** Domains whose mail is accepted. Default `['mailroom.test']`. */
  domains?: readonly string[];
  /** How long a message lives, in milliseconds. Default 1 hour. */
  retention?: number;
  /** Global cap on stored messages; the oldest is evicted first (and logged). Default 100,000. */
  maxMessages?: number;
  /** Largest accepted message in bytes (advertised as SMTP SIZE). Default 25 MiB. */
  maxMessageBytes?: number;
  /**
   * Cap on the bytes the memory store holds (each source once, however many
   * mailboxes it went to, plus about 1 KiB per stored copy); the oldest mail
   * is evicted first, and reported, like `maxMessages`. At least
   * `maxMessageBytes`. Default 256 MiB. `Infinity` for none. A Redis store
   * is bounded by Redis's own `maxmemory` instead.
   */
  maxStoreBytes?: number;
  /**
   * Distinct recipients one SMTP transaction takes; each further RCPT is
   * answered `452 4.5.3` (the client sends them in another transaction).
   * At least 100 (RFC 5321). Default 1,000.
   */
  maxRecipients?: number;
  /** List calls allowed per second per address (sliding window). Default 1. `Infinity` disables. */
  listPerSecond?: number;
  /** Message fetches and deletes allowed per second per address. Default 10. `Infinity` disables. */
  messagePerSecond?: number;
  /**
   * Concurrent long-polls (`GET /api/v1/mailbox/wait`) the server holds; one
   * more is refused at once with `503 too_many_waits`. Default 64. `0` turns
   * the long-poll off and stops advertising it. (The MCP tool
   * `wait_for_message` has its own 8 slots, as the contract says.)
   */
  waitSlots?: number;
  /**
   * The longest a server-side wait (the long-poll, `wait_for_message`) is
   * held, in milliseconds: a longer one is clamped to it, and its answer says
   * so. Default and maximum 25 s, the contract's clamp; a shorter cap lets a
   * test of the clamp see it without waiting 25 s.
   */
  holdCap?: number;
  /**
   * Open SMTP connections the server takes; one more is answered `421 4.4.5`
   * and closed. Default 1000.
   */
  maxSmtpConnections?: number;
  /** An SMTP connection silent this long (ms) is closed with `421 4.4.2`. Default 60,000. */
  smtpIdleTimeout?: number;
  /**
   * Offer STARTTLS on the SMTP port, with the certificate in `smtpTlsCert`
   * and `smtpTlsKey`, or a self-signed one for localhost, 127.0.0.1 and ::1
   * made at start. Default false (true when `smtpTlsCert` is given): a
   * client that upgrades whenever it is offered (nodemailer's default) would
   * then check a certificate it does not trust, and fail.
   */
  smtpTls?: boolean;
  /** A PEM certificate file (its chain may follow it) for SMTP over TLS, with `smtpTlsKey`. Default: one made at start. */
  smtpTlsCert?: string;
  /** The PEM private key file of `smtpTlsCert`. */
  smtpTlsKey?: string;
  /**
   * Refuse MAIL FROM before STARTTLS with `530 5.7.0 Must issue a STARTTLS
   * command first`, as a server that insists on TLS does. Needs `smtpTls`.
   * Default false.
   */
  smtpRequireTls?: boolean;
  /**
   * A second SMTP port that speaks TLS from the first byte (implicit TLS,
   * what port 465 is in production), with the same certificate as
   * `smtpTls`; 0 picks any free port. Default none.
   */
  smtpsPort?: number;
  /**
   * An HTTP client that has not sent its whole request head within this many
   * ms is answered `408` and cut off (slowloris). Default 10,000.
   */
  httpHeadersTimeout?: number;
  /** The same for the whole request, body included. Default 60,000. */
  httpRequestTimeout?: number;
  /**
   * The longest the mail checks of one message (`GET
   * /api/v1/message/{id}/checks`, the web UI's Checks tab) may take, in ms,
   * from the call to the report: past it they are stopped and the call is
   * answered `503 checks_timeout`. They run in threads of their own, never
   * on the thread serving SMTP and HTTP. Default 30,000; at most 600,000.
   */
  checksTimeout?: number;
  /** When set, every API call must send `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * Host names (no port) the HTTP server answers to besides `localhost`,
   * `127.0.0.1` and `[::1]` (a reverse proxy's or a container's name).
   * On loopback any other `Host` is `403 forbidden_host` (DNS rebinding);
   * bound elsewhere, names are checked only when this is given. Default none.
   */
  allowedHosts?: readonly string[];
  /**
   * Web origins (`https://app.example:8443`) whose pages may call the server
   * besides its own; any other `Origin` is `403 forbidden_origin`. Default none.
   */
  allowOrigins?: readonly string[];
  /** Serve the fault switch over HTTP (`/_mailroom/faults`, `/_mailroom/stats`). Default false. */
  faultInjection?: boolean;
  /**
   * The SMTP deferral lab: per-address rules (greylist, throttle, defer,
   * reject, slow, disconnect) set over HTTP, and the per-address attempt
   * log. Default true; `false` serves neither, and SMTP intake runs as if
   * no address had rules.
   */
  smtpRules?: boolean;
  /**
   * The email providers' send APIs on the HTTP port, at their own paths
   * (Resend `/emails`, SES `/v2/email/outbound-emails`, SendGrid
   * `/v3/mail/send`, ...): an app's unchanged SDK, pointed at the server,
   * sends into the same store as SMTP (docs/providers.md). Default true.
   */
  providerApis?: boolean;
  /**
   * Take mail for every domain, over SMTP and the provider APIs, and read
   * any address's mailbox, as a test catcher does; fresh addresses are still
   * made on the first of `domains`. Default true; `false` refuses other
   * domains (`550 5.1.2`, `unknown_domain`).
   */
  catchAll?: boolean;
  /**
   * Webhooks: registrations over HTTP (`/api/v1/webhooks`), the events
   * `message.received`, `delivery.deferred` and `delivery.rejected` posted
   * to them with retries, and `/metrics`. Default true; `false` serves
   * none of it and the SMTP path asks nothing of webhooks.
   */
  webhooks?: boolean;
  /**
   * Webhooks registered at start, for every address, with the default
   * retry policy (`mailroom serve --webhook URL --webhook-secret S`).
   */
  staticWebhooks?: readonly StaticWebhook[];
  /**
   * Where webhooks may post: host names, addresses or CIDRs
   * (`["hooks.internal", "10.0.0.0/8"]`); any other destination is refused
   * at registration. Default: anywhere. Link-local addresses
   * (169.254.0.0/16, fe80::/10) and the clouds' metadata services are
   * never a destination, and cannot be listed.
   */
  webhookAllow?: readonly string[];
  /**
   * The loopback and private destinations the web UI's link check
   * (`POST /api/v1/message/{id}/checks` with `{"links": true}`) may reach:
   * host names, addresses or CIDRs, typically the app under test's
   * (`["127.0.0.1", "app.internal"]`). Default: none, so a link in a mail
   * cannot make this server probe its own network. Public addresses are
   * always checked; link-local addresses and the clouds' metadata services
   * never are, and cannot be listed.
   */
  linkCheckAllow?: readonly string[];
  /**
   * Where the mail lives: `memory` (the default, this process only) or a
   * Redis URL (`redis://host:port/db`, `rediss://` for TLS, `?prefix=name`
   * for another key prefix than `mailroom`). Every server given the same
   * Redis URL shares mailboxes, the list and message budgets, the global
   * cap, wake-ups, the SMTP rules and attempt log, and the webhooks with
   * their retry state (README, "Running one mailroom for many CI machines").
   */
  store?: string;
  /** Wall clock for received_at, retention and budgets. Default `Date`. */
  clock?: WallClock;
  /** Where webhook retries draw their jitter. Default `Math.random`. */
  random?: RandomSource;
  /** Where evictions and internal errors are reported. Default: warnings and errors to the console. */
  logger?: Logger;
}

/** A webhook registered when the server starts. */
export interface StaticWebhook {
  readonly url: string;
  /** Signs every attempt; made up (and logged) when not given. */
  readonly secret?: string | undefined;
  /** Default: every event type. */
  readonly events?: readonly WebhookEventType[] | undefined;
  /** How its events are shaped and signed: `mailroom` (the default) or a provider's (`mailroom serve --webhook-format`). */
  readonly format?: WebhookFormat | undefined;
}

export interface ResolvedServerOptions {
  readonly host: string;
  readonly smtpPort: number;
  readonly httpPort: number;
  readonly domains: readonly string[];
  readonly retention: number;
  readonly maxMessages: number;
  readonly maxMessageBytes: number;
  readonly maxStoreBytes: number;
  readonly maxRecipients: number;
  readonly listPerSecond: number;
  readonly messagePerSecond: number;
  readonly waitSlots: number;
  readonly holdCap: number;
  readonly maxSmtpConnections: number;
  readonly smtpIdleTimeout: number;
  /** STARTTLS offered on the SMTP port. */
  readonly smtpTls: boolean;
  /** MAIL FROM refused before STARTTLS. */
  readonly smtpRequireTls: boolean;
  /** The implicit-TLS port asked for, or undefined for none. */
  readonly smtpsPort: number | undefined;
  /** The certificate given (`smtpTlsCert`, `smtpTlsKey`), read; undefined: one is made at start when TLS is on. */
  readonly smtpTlsCertificate: TlsCertificate | undefined;
  readonly httpHeadersTimeout: number;
  readonly httpRequestTimeout: number;
  readonly checksTimeout: number;
  readonly token: string | undefined;
  readonly allowedHosts: readonly string[];
  readonly allowOrigins: readonly string[];
  readonly faultInjection: boolean;
  readonly smtpRules: boolean;
  readonly providerApis: boolean;
  readonly catchAll: boolean;
  readonly webhooks: boolean;
  readonly staticWebhooks: readonly StaticWebhook[];
  readonly webhookAllow: readonly string[];
  readonly linkCheckAllow: readonly string[];
  readonly store: StoreLocation;
  readonly clock: WallClock;
  readonly random: RandomSource;
  readonly logger: Logger;
}

export const DEFAULTS = Object.freeze({
  host: DEFAULT_HOST,
  smtpPort: DEFAULT_SMTP_PORT,
  httpPort: DEFAULT_HTTP_PORT,
  domains: Object.freeze([DEFAULT_DOMAIN]),
  retention: 60 * 60 * 1000,
  maxMessages: 100_000,
  maxMessageBytes: 25 * 1024 * 1024,
  maxRecipients: 1000,
  maxStoreBytes: 256 * 1024 * 1024,
  listPerSecond: 1,
  messagePerSecond: 10,
  waitSlots: 64,
  holdCap: MAX_WAIT_SECONDS * 1000,
  maxSmtpConnections: 1000,
  smtpIdleTimeout: 60_000,
  httpHeadersTimeout: 10_000,
  httpRequestTimeout: 60_000,
  checksTimeout: 30_000,
});

/** The longest `checksTimeout`: a mail's checks take seconds; ten minutes is room for a links check of slow hosts. */
const MAX_CHECKS_TIMEOUT = 600_000;

const systemClock: WallClock = Object.freeze({ now: () => Date.now() });

const KNOWN_OPTIONS = new Set<string>([
  'host',
  'smtpPort',
  'httpPort',
  'domains',
  'retention',
  'maxMessages',
  'maxMessageBytes',
  'maxRecipients',
  'maxStoreBytes',
  'listPerSecond',
  'messagePerSecond',
  'waitSlots',
  'holdCap',
  'maxSmtpConnections',
  'smtpIdleTimeout',
  'smtpTls',
  'smtpTlsCert',
  'smtpTlsKey',
  'smtpRequireTls',
  'smtpsPort',
  'httpHeadersTimeout',
  'httpRequestTimeout',
  'checksTimeout',
  'token',
  'allowedHosts',
  'allowOrigins',
  'faultInjection',
  'smtpRules',
  'providerApis',
  'catchAll',
  'webhooks',
  'staticWebhooks',
  'webhookAllow',
  'linkCheckAllow',
  'store',
  'clock',
  'random',
  'logger',
]);

/** `scheme://host[:port]` and nothing more, http or https. */
function isWebOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    const bare = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
    return (url.protocol === 'http:' || url.protocol === 'https:') && bare && !/[/?#]./.test(value.slice(url.protocol.length + 2));
  } catch {
    return false;
  }
}

function expect(condition: boolean, name: string, what: string, value: unknown): void {
  if (!condition) throw expectedError(name, what, value);
}

/** An allow list of destinations: host names, addresses or CIDRs, none of which link-local or a metadata address (contract/destinations.ts). */
function checkAllowList(name: string, value: unknown, example: string): void {
  const what = `an array of host names, addresses or CIDRs such as ${example}`;
  expect(Array.isArray(value) && value.every((entry) => typeof entry === 'string'), name, what, value);
  for (const entry of value as readonly string[]) {
    const problem = allowEntryProblem(entry);
    if (problem) throw new TypeError(`Expected \`${name}\` to be ${what}, got ${JSON.stringify(entry)}: ${problem}`);
  }
}

function checkPort(name: string, value: number): void {
  expect(Number.isInteger(value) && value >= 0 && value <= 65535, name, 'an integer from 0 to 65535 (0 = any free port)', value);
}

/** The contents of a PEM file option, with an error naming the option, the path and why it could not be read. */
function readPem(name: string, path: unknown, what: string, marker: RegExp): string {
  expect(typeof path === 'string' && path !== '', name, `the path of ${what}`, path);
  let text: string;
  try {
    text = readFileSync(path as string, 'utf8');
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new TypeError(`Expected \`${name}\` to be the path of ${what}, but ${JSON.stringify(path)} cannot be read: ${code ?? message}`, { cause: error });
  }
  if (!marker.test(text))
    throw new TypeError(`Expected \`${name}\` to be the path of ${what}, but ${JSON.stringify(path)} holds no PEM ${what.replace(/^an? /, '')}`);
  return text;
}

/** The certificate and key files given for SMTP over TLS, read and checked to be a pair; undefined when neither is given. */
function readTlsCertificate(certPath: unknown, keyPath: unknown): TlsCertificate | undefined {
  if (certPath === undefined && keyPath === undefined) return undefined;
  expect(keyPath !== undefined, 'smtpTlsKey', `the path of the private key of smtpTlsCert (${JSON.stringify(certPath)})`, keyPath);
  expect(certPath !== undefined, 'smtpTlsCert', `the path of the certificate of smtpTlsKey (${JSON.stringify(keyPath)})`, certPath);
  const cert = readPem('smtpTlsCert', certPath, 'a certificate', /-----BEGIN CERTIFICATE-----/);
  const key = readPem('smtpTlsKey', keyPath, 'a private key', /-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new TypeError(
      `Expected \`smtpTlsKey\` to be the private key of the certificate in smtpTlsCert (${JSON.stringify(certPath)}), got ${JSON.stringify(keyPath)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return Object.freeze({ cert, key });
}

function checkRate(name: string, value: number): void {
  expect(
    typeof value === 'number' && value > 0 && !Number.isNaN(value),
    name,
    'a positive number of calls per second (or Infinity to disable the budget)',
    value,
  );
}

// Over 80 lines on purpose: one flat check per option, in the order of
// ServerOptions, each naming its option and value; split up, a reader would
// hunt for where an option is checked.
export function resolveServerOptions(options: ServerOptions = {}): ResolvedServerOptions {
  expect(options !== null && typeof options === 'object', 'options', 'an object', options);
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) {
      throw new TypeError(`Unknown option \`${key}\`; startServer accepts ${[...KNOWN_OPTIONS].map((k) => `\`${k}\``).join(', ')}`);
    }
  }
  const o = { ...options };
  o.host ??= DEFAULTS.host;
  o.smtpPort ??= DEFAULTS.smtpPort;
  o.httpPort ??= DEFAULTS.httpPort;
  o.domains ??= DEFAULTS.domains;
  o.retention ??= DEFAULTS.retention;
  o.maxMessages ??= DEFAULTS.maxMessages;
  o.maxMessageBytes ??= DEFAULTS.maxMessageBytes;
  o.maxRecipients ??= DEFAULTS.maxRecipients;
  o.maxStoreBytes ??= Math.max(DEFAULTS.maxStoreBytes, o.maxMessageBytes);
  o.listPerSecond ??= DEFAULTS.listPerSecond;
  o.messagePerSecond ??= DEFAULTS.messagePerSecond;
  o.waitSlots ??= DEFAULTS.waitSlots;
  o.holdCap ??= DEFAULTS.holdCap;
  o.maxSmtpConnections ??= DEFAULTS.maxSmtpConnections;
  o.smtpIdleTimeout ??= DEFAULTS.smtpIdleTimeout;
  o.httpHeadersTimeout ??= DEFAULTS.httpHeadersTimeout;
  o.httpRequestTimeout ??= DEFAULTS.httpRequestTimeout;
  o.checksTimeout ??= DEFAULTS.checksTimeout;
  o.allowedHosts ??= [];
  o.allowOrigins ??= [];
  o.faultInjection ??= false;
  o.smtpRules ??= true;
  o.providerApis ??= true;
  o.catchAll ??= true;
  o.webhooks ??= true;
  o.staticWebhooks ??= [];
  o.webhookAllow ??= [];
  o.linkCheckAllow ??= [];
  o.clock ??= systemClock;
  o.random ??= Math.random;
  o.logger ??= defaultLogger;

  expect(typeof o.host === 'string' && (isIP(o.host) !== 0 || isDomainName(o.host)), 'host', 'an IP address or host name such as "127.0.0.1"', o.host);
  checkPort('smtpPort', o.smtpPort);
  checkPort('httpPort', o.httpPort);
  expect(o.smtpPort === 0 || o.smtpPort !== o.httpPort, 'httpPort', `a different port from smtpPort (${o.smtpPort})`, o.httpPort);

  expect(Array.isArray(o.domains) && o.domains.length > 0, 'domains', 'a non-empty array of domain names', o.domains);
  const domains: string[] = [];
  for (const domain of o.domains) {
    expect(typeof domain === 'string' && isDomainName(domain.toLowerCase()), 'domains', 'an array of domain names such as "mailroom.test"', o.domains);
    const lower = domain.toLowerCase();
    if (!domains.includes(lower)) domains.push(lower);
  }

  assertMs('retention', o.retention, { positive: true });
  expect(
    o.maxMessages === Infinity || (Number.isInteger(o.maxMessages) && o.maxMessages >= 1),
    'maxMessages',
    'a positive integer (or Infinity for no cap)',
    o.maxMessages,
  );
  expect(Number.isInteger(o.maxMessageBytes) && o.maxMessageBytes >= 1024, 'maxMessageBytes', 'an integer number of bytes, at least 1024', o.maxMessageBytes);
  expect(
    o.maxStoreBytes === Infinity || (Number.isInteger(o.maxStoreBytes) && o.maxStoreBytes >= o.maxMessageBytes),
    'maxStoreBytes',
    `an integer number of bytes, at least maxMessageBytes (${o.maxMessageBytes}), or Infinity for no cap`,
    o.maxStoreBytes,
  );
  expect(
    Number.isInteger(o.maxRecipients) && o.maxRecipients >= 100,
    'maxRecipients',
    'an integer number of recipients, at least 100 (RFC 5321 asks servers to take 100)',
    o.maxRecipients,
  );
  checkRate('listPerSecond', o.listPerSecond);
  checkRate('messagePerSecond', o.messagePerSecond);
  expect(
    Number.isInteger(o.waitSlots) && o.waitSlots >= 0 && o.waitSlots <= 100_000,
    'waitSlots',
    'an integer from 0 to 100000 (0 turns the long-poll off)',
    o.waitSlots,
  );
  expect(
    typeof o.holdCap === 'number' && o.holdCap > 0 && o.holdCap <= DEFAULTS.holdCap,
    'holdCap',
    `a positive number of milliseconds, at most ${DEFAULTS.holdCap} (the contract's clamp)`,
    o.holdCap,
  );
  expect(
    Number.isInteger(o.maxSmtpConnections) && o.maxSmtpConnections >= 1,
    'maxSmtpConnections',
    'a positive integer number of connections',
    o.maxSmtpConnections,
  );
  assertMs('smtpIdleTimeout', o.smtpIdleTimeout, { positive: true });
  const smtpTlsCertificate = readTlsCertificate(o.smtpTlsCert, o.smtpTlsKey);
  const smtpTls = o.smtpTls ?? smtpTlsCertificate !== undefined;
  expect(typeof smtpTls === 'boolean', 'smtpTls', 'a boolean', smtpTls);
  const smtpRequireTls = o.smtpRequireTls ?? false;
  expect(typeof smtpRequireTls === 'boolean', 'smtpRequireTls', 'a boolean', smtpRequireTls);
  expect(!smtpRequireTls || smtpTls, 'smtpRequireTls', 'false while smtpTls is off (no client could send without STARTTLS offered)', smtpRequireTls);
  if (o.smtpsPort !== undefined) {
    checkPort('smtpsPort', o.smtpsPort);
    expect(
      o.smtpsPort === 0 || (o.smtpsPort !== o.smtpPort && o.smtpsPort !== o.httpPort),
      'smtpsPort',
      `a different port from smtpPort (${o.smtpPort}) and httpPort (${o.httpPort})`,
      o.smtpsPort,
    );
  }
  expect(
    smtpTlsCertificate === undefined || smtpTls || o.smtpsPort !== undefined,
    'smtpTlsCert',
    'given only with smtpTls or smtpsPort on (nothing else presents a certificate)',
    o.smtpTlsCert,
  );
  assertMs('httpHeadersTimeout', o.httpHeadersTimeout, { positive: true });
  assertMs('httpRequestTimeout', o.httpRequestTimeout, { positive: true });
  expect(o.httpRequestTimeout >= o.httpHeadersTimeout, 'httpRequestTimeout', `at least httpHeadersTimeout (${o.httpHeadersTimeout} ms)`, o.httpRequestTimeout);
  expect(
    typeof o.checksTimeout === 'number' && o.checksTimeout > 0 && o.checksTimeout <= MAX_CHECKS_TIMEOUT,
    'checksTimeout',
    `a positive number of milliseconds, at most ${MAX_CHECKS_TIMEOUT} (10 minutes)`,
    o.checksTimeout,
  );
  expect(
    o.token === undefined || (typeof o.token === 'string' && o.token.length > 0 && /^[\x21-\x7e]+$/.test(o.token)),
    'token',
    'a non-empty string of printable ASCII without spaces',
    // A secret is never echoed, not even a malformed one (it may be the real token with a stray space).
    typeof o.token === 'string' && o.token !== '' ? '(not shown)' : o.token,
  );
  expect(
    Array.isArray(o.allowedHosts) && o.allowedHosts.every((name) => typeof name === 'string' && (isIP(name) !== 0 || isDomainName(name.toLowerCase()))),
    'allowedHosts',
    'an array of host names or addresses without a port, such as ["mail.internal"]',
    o.allowedHosts,
  );
  expect(
    Array.isArray(o.allowOrigins) && o.allowOrigins.every((origin) => typeof origin === 'string' && isWebOrigin(origin)),
    'allowOrigins',
    'an array of web origins such as ["https://app.example:8443"] (scheme, host and port; no path)',
    o.allowOrigins,
  );
  expect(typeof o.faultInjection === 'boolean', 'faultInjection', 'a boolean', o.faultInjection);
  expect(typeof o.smtpRules === 'boolean', 'smtpRules', 'a boolean', o.smtpRules);
  expect(typeof o.providerApis === 'boolean', 'providerApis', 'a boolean', o.providerApis);
  expect(typeof o.catchAll === 'boolean', 'catchAll', 'a boolean', o.catchAll);
  expect(typeof o.webhooks === 'boolean', 'webhooks', 'a boolean', o.webhooks);
  expect(
    Array.isArray(o.staticWebhooks) && o.staticWebhooks.every((w) => w !== null && typeof w === 'object' && typeof (w as StaticWebhook).url === 'string'),
    'staticWebhooks',
    'an array of { url, secret?, events? }',
    o.staticWebhooks,
  );
  expect(o.webhooks || o.staticWebhooks.length === 0, 'staticWebhooks', 'empty when `webhooks` is false', o.staticWebhooks);
  checkAllowList('webhookAllow', o.webhookAllow, '["hooks.internal", "10.0.0.0/8"]');
  checkAllowList('linkCheckAllow', o.linkCheckAllow, '["127.0.0.1", "app.internal"]');
  expect(typeof o.random === 'function', 'random', 'a function returning numbers in [0, 1), like Math.random', o.random);
  expect(
    typeof o.clock === 'object' && o.clock !== null && typeof o.clock.now === 'function',
    'clock',
    'an object with a now() method returning milliseconds',
    o.clock,
  );
  const store = parseStoreLocation(o.store);
  const logger = o.logger;
  expect(
    typeof logger === 'object' &&
      logger !== null &&
      ['info', 'warn', 'error'].every((level) => typeof (logger as unknown as Record<string, unknown>)[level] === 'function'),
    'logger',
    'an object with info, warn and error methods',
    logger,
  );

  return Object.freeze({
    host: o.host,
    smtpPort: o.smtpPort,
    httpPort: o.httpPort,
    domains: Object.freeze(domains),
    retention: o.retention,
    maxMessages: o.maxMessages,
    maxMessageBytes: o.maxMessageBytes,
    maxRecipients: o.maxRecipients,
    maxStoreBytes: o.maxStoreBytes,
    listPerSecond: o.listPerSecond,
    messagePerSecond: o.messagePerSecond,
    waitSlots: o.waitSlots,
    holdCap: o.holdCap,
    maxSmtpConnections: o.maxSmtpConnections,
    smtpIdleTimeout: o.smtpIdleTimeout,
    smtpTls,
    smtpRequireTls,
    smtpsPort: o.smtpsPort,
    smtpTlsCertificate,
    httpHeadersTimeout: o.httpHeadersTimeout,
    httpRequestTimeout: o.httpRequestTimeout,
    checksTimeout: o.checksTimeout,
    token: o.token,
    allowedHosts: Object.freeze(o.allowedHosts.map((name) => name.toLowerCase())),
    allowOrigins: Object.freeze([...o.allowOrigins]),
    faultInjection: o.faultInjection,
    smtpRules: o.smtpRules,
    providerApis: o.providerApis,
    catchAll: o.catchAll,
    webhooks: o.webhooks,
    staticWebhooks: Object.freeze([...o.staticWebhooks]),
    webhookAllow: Object.freeze([...o.webhookAllow]),
    linkCheckAllow: Object.freeze([...o.linkCheckAllow]),
    store,
    clock: o.clock,
    random: o.random,
    logger: o.logger,
  });
}
