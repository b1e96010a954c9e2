// A `webServer` entry for playwright.config.ts that runs `mailroom serve`
// for the length of the test run and waits for its /healthz.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { PlaywrightTestConfig } from '@playwright/test';
import { DEFAULT_HOST, DEFAULT_HTTP_PORT, DEFAULT_SMTP_PORT } from '../contract/defaults.js';
import { HEALTH_PATH } from '../contract/routes.js';
import { assertMs, expectedError } from '../contract/validation.js';

type WebServer = Exclude<NonNullable<PlaywrightTestConfig['webServer']>, readonly unknown[]>;

/** Options of `mailroomWebServer()`: where `mailroom serve` listens, and how Playwright waits for it. */
export interface MailroomWebServerOptions {
  /** SMTP port (default 2525, as `mailroom serve`). */
  readonly smtpPort?: number | undefined;
  /** HTTP API port (default 8025); readiness is `GET /healthz` there. */
  readonly httpPort?: number | undefined;
  /** Interface both listeners bind to (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** Domains whose mail is accepted (default `mailroom.test`). */
  readonly domains?: readonly string[] | undefined;
  /** Host names the server answers to besides loopback ones (`--allowed-host`), e.g. a container's name. */
  readonly allowedHosts?: readonly string[] | undefined;
  /** Web origins whose pages may call the server (`--allow-origin`), e.g. `http://localhost:3000`. */
  readonly allowOrigins?: readonly string[] | undefined;
  /**
   * Loopback and private hosts, addresses or CIDRs the web UI's "Check links
   * too" may reach (`--link-check-allow`), e.g. your app's `127.0.0.1`.
   * Default none: the UI's link check reaches public hosts only.
   */
  readonly linkCheckAllow?: readonly string[] | undefined;
  /** Offer STARTTLS on the SMTP port (`--smtp-tls`), with a certificate made at start unless `smtpTlsCert` is given. Default off. */
  readonly smtpTls?: boolean | undefined;
  /** A PEM certificate file for SMTP over TLS (`--smtp-tls-cert`), with `smtpTlsKey`. */
  readonly smtpTlsCert?: string | undefined;
  /** Its PEM private key file (`--smtp-tls-key`). */
  readonly smtpTlsKey?: string | undefined;
  /** Refuse MAIL FROM before STARTTLS with `530 5.7.0` (`--smtp-require-tls`); needs `smtpTls`. */
  readonly smtpRequireTls?: boolean | undefined;
  /** Also listen with implicit TLS on this port (`--smtps-port`). Default none. */
  readonly smtpsPort?: number | undefined;
  /** Use a server already listening there instead of starting one (default: yes, except on CI). */
  readonly reuseExistingServer?: boolean | undefined;
  /** How long to wait for /healthz, in ms (default 30 s). */
  readonly timeout?: number | undefined;
}

/**
 * `webServer: [mailroomWebServer({ smtpPort: 2626, httpPort: 8126 })]`
 * starts the embedded mail server before the tests and stops it after.
 * Point the tests at it with `use: { mailroom: { apiURL: 'http://127.0.0.1:8126' } }`.
 */
export function mailroomWebServer(options: MailroomWebServerOptions = {}): WebServer {
  if (options === null || typeof options !== 'object')
    throw new TypeError('Expected mailroomWebServer options to be an object like { smtpPort: 2525, httpPort: 8025 }');
  const smtpPort = port('smtpPort', options.smtpPort ?? DEFAULT_SMTP_PORT);
  const httpPort = port('httpPort', options.httpPort ?? DEFAULT_HTTP_PORT);
  const host = options.host ?? DEFAULT_HOST;
  if (typeof host !== 'string' || host === '') throw expectedError('host', 'an interface address like "127.0.0.1"', host);
  const domains: readonly unknown[] = options.domains ?? [];
  if (!Array.isArray(domains) || !domains.every((d): d is string => typeof d === 'string' && d !== ''))
    throw expectedError('domains', 'an array of domain names', domains);
  const allowedHosts: readonly unknown[] = options.allowedHosts ?? [];
  if (!Array.isArray(allowedHosts) || !allowedHosts.every((h): h is string => typeof h === 'string' && h !== ''))
    throw expectedError('allowedHosts', 'an array of host names', allowedHosts);
  const allowOrigins: readonly unknown[] = options.allowOrigins ?? [];
  if (!Array.isArray(allowOrigins) || !allowOrigins.every((o): o is string => typeof o === 'string' && o !== ''))
    throw expectedError('allowOrigins', 'an array of origins like "http://localhost:3000"', allowOrigins);
  const linkCheckAllow: readonly unknown[] = options.linkCheckAllow ?? [];
  if (!Array.isArray(linkCheckAllow) || !linkCheckAllow.every((h): h is string => typeof h === 'string' && h !== ''))
    throw expectedError('linkCheckAllow', 'an array of hosts, addresses or CIDRs like "127.0.0.1"', linkCheckAllow);
  const tls = tlsArgs(options);
  const timeout = options.timeout ?? 30_000;
  assertMs('timeout', timeout, { positive: true });

  const cli = fileURLToPath(new URL('../cli/index.js', import.meta.url));
  if (!existsSync(cli)) throw new Error(`mailroomWebServer: the mailroom CLI is missing at ${cli}; is the package built (npm run build)?`);
  const args = [
    'serve',
    '--smtp-port',
    String(smtpPort),
    '--http-port',
    String(httpPort),
    '--host',
    host,
    ...domains.flatMap((d) => ['--domain', d]),
    ...allowedHosts.flatMap((h) => ['--allowed-host', h]),
    ...allowOrigins.flatMap((o) => ['--allow-origin', o]),
    ...linkCheckAllow.flatMap((h) => ['--link-check-allow', h]),
    ...tls,
  ];
  const readyHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    name: 'mailroom',
    command: [process.execPath, cli, ...args].map(shellQuote).join(' '),
    url: `http://${readyHost}:${httpPort}${HEALTH_PATH}`,
    reuseExistingServer: options.reuseExistingServer ?? !process.env.CI,
    timeout,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
  };
}

/** The SMTP-over-TLS flags; the files and the combinations are checked by `mailroom serve` itself, naming the flag. */
function tlsArgs(options: MailroomWebServerOptions): string[] {
  const { smtpTls, smtpTlsCert, smtpTlsKey, smtpRequireTls, smtpsPort } = options;
  for (const [name, value] of [
    ['smtpTls', smtpTls],
    ['smtpRequireTls', smtpRequireTls],
  ] as const) {
    if (value !== undefined && typeof value !== 'boolean') throw expectedError(name, 'a boolean', value);
  }
  for (const [name, value] of [
    ['smtpTlsCert', smtpTlsCert],
    ['smtpTlsKey', smtpTlsKey],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) throw expectedError(name, 'the path of a PEM file', value);
  }
  return [
    ...(smtpTls ? ['--smtp-tls'] : []),
    ...(smtpTlsCert !== undefined ? ['--smtp-tls-cert', smtpTlsCert] : []),
    ...(smtpTlsKey !== undefined ? ['--smtp-tls-key', smtpTlsKey] : []),
    ...(smtpRequireTls ? ['--smtp-require-tls'] : []),
    ...(smtpsPort !== undefined ? ['--smtps-port', String(port('smtpsPort', smtpsPort))] : []),
  ];
}

function port(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) {
    throw expectedError(name, 'a port from 1 to 65535', value);
  }
  return value;
}

/** Quotes for `sh -c` (and cmd.exe, which takes double quotes). */
function shellQuote(word: string): string {
  return /^[\w./:@=-]+$/.test(word) ? word : JSON.stringify(word);
}
