// `mailroom serve`'s flags and environment variables turned into startServer
// options (flags win), each mistake named with the flag and its variable.
// A secret given on the command line is taken with a warning (secret-option.ts).
import { accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import { isDomainName } from '../contract/address.js';
import { blankToUndefined, describeValue } from '../contract/validation.js';
import { WEBHOOK_FORMATS, type WebhookFormat } from '../contract/provider-events.js';
import type { ServerOptions } from '../server/index.js';
import { parseStoreLocation } from '../server/store/store-location.js';
import { parseDuration } from './duration.js';
import { secretOption, type SecretNames } from './secret-option.js';
import { UsageError } from './usage-error.js';

export { UsageError } from './usage-error.js';

const TOKEN: SecretNames = { command: 'mailroom serve', flag: 'token', envName: 'MAILROOM_TOKEN', what: 'the API token' };
const WEBHOOK_SECRET: SecretNames = {
  command: 'mailroom serve',
  flag: 'webhook-secret',
  envName: 'MAILROOM_WEBHOOK_SECRET',
  what: 'the secret that signs the --webhook posts',
};

function integer(value: string, flag: string, envName: string, min: number, max: number, what: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`mailroom serve: ${flag} (or ${envName}) must be ${what}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** An on/off variable (`1`, `true`, `yes` or `0`, `false`, `no`); undefined when unset or blank. */
function onOff(env: NodeJS.ProcessEnv, envName: string, meaning: string): boolean | undefined {
  const value = blankToUndefined(env[envName])?.trim();
  if (value === undefined) return undefined;
  if (!/^(0|1|true|false|yes|no)$/i.test(value)) throw new UsageError(`mailroom serve: ${envName} must be 1 (${meaning}) or 0, got ${JSON.stringify(value)}`);
  return /^(1|true|yes)$/i.test(value);
}

/** A file the server will read: named with its flag when it cannot be read, before the server starts. */
function readableFile(path: string, flag: string, envName: string): string {
  try {
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw new UsageError(
      `mailroom serve: ${flag} (or ${envName}) must be a readable file, but ${JSON.stringify(path)} cannot be read (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  return path;
}

/** A Redis URL's password on the command line: the same exposure as a token there. */
function storeWarning(store: string): string | undefined {
  try {
    if (new URL(store).password === '') return undefined;
  } catch {
    return undefined;
  }
  return "mailroom serve: warning: --store's URL carries a password, which every user of this machine can read on the command line (`ps` shows it while the server runs); set MAILROOM_STORE instead";
}

/** Builds startServer options from argv and the environment (flags win), and the warnings to print first. Exported for tests. */
export function optionsFrom(argv: readonly string[], env: NodeJS.ProcessEnv): { options: ServerOptions; help: boolean; version: boolean; warnings: string[] } {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: {
        'smtp-port': { type: 'string' },
        'http-port': { type: 'string' },
        host: { type: 'string' },
        domain: { type: 'string', multiple: true },
        retention: { type: 'string' },
        'max-messages': { type: 'string' },
        'max-message-bytes': { type: 'string' },
        'max-recipients': { type: 'string' },
        'max-store-bytes': { type: 'string' },
        token: { type: 'string' },
        'token-file': { type: 'string' },
        'allowed-host': { type: 'string', multiple: true },
        'allow-origin': { type: 'string', multiple: true },
        'wait-slots': { type: 'string' },
        'enable-faults': { type: 'boolean' },
        'no-smtp-rules': { type: 'boolean' },
        'no-provider-apis': { type: 'boolean' },
        'no-catch-all': { type: 'boolean' },
        webhook: { type: 'string', multiple: true },
        'webhook-secret': { type: 'string' },
        'webhook-secret-file': { type: 'string' },
        'webhook-format': { type: 'string' },
        'webhook-allow': { type: 'string', multiple: true },
        'link-check-allow': { type: 'string', multiple: true },
        'no-webhooks': { type: 'boolean' },
        store: { type: 'string' },
        'smtp-tls': { type: 'boolean' },
        'smtp-tls-cert': { type: 'string' },
        'smtp-tls-key': { type: 'string' },
        'smtp-require-tls': { type: 'boolean' },
        'smtps-port': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    throw new UsageError(`mailroom serve: ${(error as Error).message}. Run \`mailroom serve --help\` for the options.`);
  }
  const v = parsed.values;
  const pick = (flag: string, envName: string): string | undefined => {
    const fromFlag = (v as Record<string, unknown>)[flag];
    if (typeof fromFlag === 'string') return fromFlag;
    return blankToUndefined(env[envName]);
  };
  const options: ServerOptions = {};
  const warnings: string[] = [];
  /** A repeatable flag, or its variable's comma-separated values. */
  const list = (flag: string, envName: string): string[] | undefined => {
    const fromFlags = (v as Record<string, unknown>)[flag];
    const values = Array.isArray(fromFlags) ? (fromFlags as string[]) : env[envName]?.split(',');
    const given = values?.map((value) => value.trim()).filter(Boolean);
    return given && given.length > 0 ? given : undefined;
  };

  const smtpPort = pick('smtp-port', 'MAILROOM_SMTP_PORT');
  if (smtpPort !== undefined) options.smtpPort = integer(smtpPort, '--smtp-port', 'MAILROOM_SMTP_PORT', 0, 65535, 'a port from 0 to 65535');
  const httpPort = pick('http-port', 'MAILROOM_HTTP_PORT');
  if (httpPort !== undefined) options.httpPort = integer(httpPort, '--http-port', 'MAILROOM_HTTP_PORT', 0, 65535, 'a port from 0 to 65535');
  const host = pick('host', 'MAILROOM_HOST');
  if (host !== undefined) options.host = host;

  const domains =
    v.domain ??
    env.MAILROOM_DOMAIN?.split(',')
      .map((d) => d.trim())
      .filter(Boolean);
  if (domains && domains.length > 0) options.domains = domains;

  const retention = pick('retention', 'MAILROOM_RETENTION');
  if (retention !== undefined) {
    const ms = parseDuration(retention);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(
        `mailroom serve: --retention (or MAILROOM_RETENTION) must be a duration such as 90s, 30m, 1h or 2d, got ${JSON.stringify(retention)}`,
      );
    }
    options.retention = ms;
  }
  const maxMessages = pick('max-messages', 'MAILROOM_MAX_MESSAGES');
  if (maxMessages !== undefined) {
    options.maxMessages = /^(unlimited|infinity)$/i.test(maxMessages)
      ? Infinity
      : integer(maxMessages, '--max-messages', 'MAILROOM_MAX_MESSAGES', 1, Number.MAX_SAFE_INTEGER, 'a positive whole number or "unlimited"');
  }
  const maxBytes = pick('max-message-bytes', 'MAILROOM_MAX_MESSAGE_BYTES');
  if (maxBytes !== undefined) {
    options.maxMessageBytes = integer(
      maxBytes,
      '--max-message-bytes',
      'MAILROOM_MAX_MESSAGE_BYTES',
      1024,
      Number.MAX_SAFE_INTEGER,
      'a whole number of bytes, at least 1024',
    );
  }
  const maxStoreBytes = pick('max-store-bytes', 'MAILROOM_MAX_STORE_BYTES');
  if (maxStoreBytes !== undefined) {
    const match = /^\s*(\d+)\s*(?:([kmg])i?b?)?\s*$/i.exec(maxStoreBytes);
    if (/^\s*(unlimited|infinity)\s*$/i.test(maxStoreBytes)) options.maxStoreBytes = Infinity;
    else if (match) options.maxStoreBytes = Number(match[1]) * 1024 ** ' kmg'.indexOf((match[2] ?? ' ').toLowerCase());
    else {
      throw new UsageError(
        `mailroom serve: --max-store-bytes (or MAILROOM_MAX_STORE_BYTES) must be a number of bytes such as 268435456, 512M or 2G, or "unlimited", got ${JSON.stringify(maxStoreBytes)}`,
      );
    }
  }
  const maxRecipients = pick('max-recipients', 'MAILROOM_MAX_RECIPIENTS');
  if (maxRecipients !== undefined) {
    options.maxRecipients = integer(
      maxRecipients,
      '--max-recipients',
      'MAILROOM_MAX_RECIPIENTS',
      100,
      Number.MAX_SAFE_INTEGER,
      'a whole number of recipients, at least 100',
    );
  }
  const waitSlots = pick('wait-slots', 'MAILROOM_WAIT_SLOTS');
  if (waitSlots !== undefined) {
    options.waitSlots = integer(waitSlots, '--wait-slots', 'MAILROOM_WAIT_SLOTS', 0, 100_000, 'a whole number from 0 to 100000 (0 turns the long-poll off)');
  }
  const token = secretOption(v, env, TOKEN);
  if (token.warning) warnings.push(token.warning);
  if (token.value !== undefined) options.token = token.value;
  const allowedHosts = list('allowed-host', 'MAILROOM_ALLOWED_HOST');
  if (allowedHosts) {
    for (const name of allowedHosts) {
      if (!isIP(name) && !isDomainName(name.toLowerCase()))
        throw new UsageError(
          `mailroom serve: --allowed-host (or MAILROOM_ALLOWED_HOST) must be a host name or address without a port, got ${JSON.stringify(name)}`,
        );
    }
    options.allowedHosts = allowedHosts;
  }
  const allowOrigins = list('allow-origin', 'MAILROOM_ALLOW_ORIGIN');
  if (allowOrigins) options.allowOrigins = allowOrigins.map((origin) => origin.replace(/\/$/, ''));
  if (v['enable-faults'] === true || /^(1|true|yes)$/i.test(env.MAILROOM_ENABLE_FAULTS ?? '')) options.faultInjection = true;
  /** Whether an on-by-default part is switched off, by its `--no-…` flag or its variable set to 0. */
  const switchedOff = (flag: 'no-smtp-rules' | 'no-provider-apis' | 'no-catch-all' | 'no-webhooks', envName: string): boolean => {
    const value = blankToUndefined(env[envName]);
    if (value !== undefined && !/^(0|1|true|false|yes|no)$/i.test(value.trim())) {
      throw new UsageError(`mailroom serve: ${envName} must be 1 (on, the default) or 0 (off), got ${JSON.stringify(value)}`);
    }
    return v[flag] === true || (value !== undefined && /^(0|false|no)$/i.test(value.trim()));
  };
  if (switchedOff('no-smtp-rules', 'MAILROOM_SMTP_RULES')) options.smtpRules = false;
  if (switchedOff('no-provider-apis', 'MAILROOM_PROVIDER_APIS')) options.providerApis = false;
  if (switchedOff('no-catch-all', 'MAILROOM_CATCH_ALL')) options.catchAll = false;

  const hooks =
    v.webhook ??
    env.MAILROOM_WEBHOOK?.split(',')
      .map((u) => u.trim())
      .filter(Boolean);
  const signing = secretOption(v, env, WEBHOOK_SECRET);
  if (signing.warning) warnings.push(signing.warning);
  const secret = signing.value;
  if (secret !== undefined && !(hooks && hooks.length > 0)) {
    throw new UsageError(
      'mailroom serve: --webhook-secret (or MAILROOM_WEBHOOK_SECRET) signs the --webhook URLs, but no --webhook (or MAILROOM_WEBHOOK) was given',
    );
  }
  if (hooks && hooks.length > 0) {
    for (const url of hooks) {
      if (!/^https?:\/\/[^/]/.test(url))
        throw new UsageError(`mailroom serve: --webhook (or MAILROOM_WEBHOOK) must be an http(s) URL, got ${describeValue(url)}`);
    }
    const format = blankToUndefined(v['webhook-format'] ?? env.MAILROOM_WEBHOOK_FORMAT);
    if (format !== undefined && !WEBHOOK_FORMATS.includes(format as WebhookFormat)) {
      throw new UsageError(
        `mailroom serve: --webhook-format (or MAILROOM_WEBHOOK_FORMAT) must be one of ${WEBHOOK_FORMATS.join(', ')}, got ${describeValue(format)}`,
      );
    }
    options.staticWebhooks = hooks.map((url) => ({ url, secret, ...(format === undefined ? {} : { format: format as WebhookFormat }) }));
  } else if (blankToUndefined(v['webhook-format'] ?? env.MAILROOM_WEBHOOK_FORMAT) !== undefined) {
    throw new UsageError(
      'mailroom serve: --webhook-format (or MAILROOM_WEBHOOK_FORMAT) shapes the --webhook posts, but no --webhook (or MAILROOM_WEBHOOK) was given',
    );
  }
  if (switchedOff('no-webhooks', 'MAILROOM_WEBHOOKS')) {
    if (options.staticWebhooks) throw new UsageError('mailroom serve: --webhook needs the webhooks on; drop --no-webhooks (or MAILROOM_WEBHOOKS=0)');
    options.webhooks = false;
  }

  const webhookAllow = list('webhook-allow', 'MAILROOM_WEBHOOK_ALLOW');
  if (webhookAllow) options.webhookAllow = webhookAllow;
  const linkCheckAllow = list('link-check-allow', 'MAILROOM_LINK_CHECK_ALLOW');
  if (linkCheckAllow) options.linkCheckAllow = linkCheckAllow;

  const store = pick('store', 'MAILROOM_STORE');
  if (store !== undefined) {
    try {
      parseStoreLocation(store.trim());
    } catch (error) {
      throw new UsageError(`mailroom serve: --store (or MAILROOM_STORE): ${(error as Error).message.replace(/^Expected `store` to be/, 'must be')}`);
    }
    options.store = store.trim();
    const exposed = typeof v.store === 'string' ? storeWarning(options.store) : undefined;
    if (exposed) warnings.push(exposed);
  }

  tlsOptions(v, pick, env, options);
  return { options, help: v.help === true, version: v.version === true, warnings };
}

/** SMTP over TLS: `--smtp-tls`, `--smtp-tls-cert`/`--smtp-tls-key`, `--smtp-require-tls`, `--smtps-port`. */
function tlsOptions(
  v: Record<string, unknown>,
  pick: (flag: string, envName: string) => string | undefined,
  env: NodeJS.ProcessEnv,
  options: ServerOptions,
): void {
  const cert = pick('smtp-tls-cert', 'MAILROOM_SMTP_TLS_CERT');
  const key = pick('smtp-tls-key', 'MAILROOM_SMTP_TLS_KEY');
  if ((cert === undefined) !== (key === undefined)) {
    throw new UsageError(
      cert === undefined
        ? 'mailroom serve: --smtp-tls-key (or MAILROOM_SMTP_TLS_KEY) needs the certificate it belongs to: give --smtp-tls-cert (or MAILROOM_SMTP_TLS_CERT) too'
        : 'mailroom serve: --smtp-tls-cert (or MAILROOM_SMTP_TLS_CERT) needs its private key: give --smtp-tls-key (or MAILROOM_SMTP_TLS_KEY) too',
    );
  }
  if (cert !== undefined && key !== undefined) {
    options.smtpTlsCert = readableFile(cert, '--smtp-tls-cert', 'MAILROOM_SMTP_TLS_CERT');
    options.smtpTlsKey = readableFile(key, '--smtp-tls-key', 'MAILROOM_SMTP_TLS_KEY');
  }
  const tls = v['smtp-tls'] === true || onOff(env, 'MAILROOM_SMTP_TLS', 'offer STARTTLS') === true || cert !== undefined;
  const required = v['smtp-require-tls'] === true || onOff(env, 'MAILROOM_SMTP_REQUIRE_TLS', 'require STARTTLS') === true;
  if (required && !tls) {
    throw new UsageError(
      'mailroom serve: --smtp-require-tls (or MAILROOM_SMTP_REQUIRE_TLS) needs STARTTLS offered: add --smtp-tls (or MAILROOM_SMTP_TLS=1), or a certificate with --smtp-tls-cert and --smtp-tls-key',
    );
  }
  if (tls) options.smtpTls = true;
  if (required) options.smtpRequireTls = true;
  const smtpsPort = pick('smtps-port', 'MAILROOM_SMTPS_PORT');
  if (smtpsPort !== undefined) options.smtpsPort = integer(smtpsPort, '--smtps-port', 'MAILROOM_SMTPS_PORT', 0, 65535, 'a port from 0 to 65535');
}
