// The `mailroom` command line: flags and environment turned into startServer
// options, one line per listener when ready, a clean exit on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { parseDuration } from './duration.js';
import type { Logger } from '../server/log.js';
import { DEFAULTS, type ServerOptions } from '../server/server-options.js';
import { startServer } from '../server/start-server.js';
import { packageVersion } from '../contract/package-version.js';

const HELP = `Usage: mailroom serve [options]
       mailroom mcp [--api-url <url>] [--token <token>]

\`mailroom mcp\` serves the MCP tools (wait_for_message, list_messages,
get_message, delete_message) over stdio, for agents configured with a
command, in front of any mailbox HTTP API: --api-url (MAILROOM_API_URL,
default http://127.0.0.1:8025) and --token (MAILROOM_TOKEN).

Runs the embedded mail server: SMTP in, the mailbox HTTP API out.

Options (each also read from the environment variable shown):
  --smtp-port <port>        SMTP port, 0 = any free port      MAILROOM_SMTP_PORT   (default ${DEFAULTS.smtpPort})
  --http-port <port>        HTTP API port, 0 = any free port  MAILROOM_HTTP_PORT   (default ${DEFAULTS.httpPort})
  --host <address>          interface to bind                 MAILROOM_HOST        (default ${DEFAULTS.host})
  --domain <domain>         served domain, repeatable         MAILROOM_DOMAIN      (default ${DEFAULTS.domains[0]}; comma-separated in the variable)
  --retention <duration>    how long mail lives: 90s, 30m, 1h MAILROOM_RETENTION   (default 1h; a bare number is seconds)
  --max-messages <n>        global cap, oldest evicted first  MAILROOM_MAX_MESSAGES (default ${DEFAULTS.maxMessages}; "unlimited" for none)
  --max-message-bytes <n>   largest accepted message          MAILROOM_MAX_MESSAGE_BYTES (default ${DEFAULTS.maxMessageBytes})
  --token <token>           require Authorization: Bearer     MAILROOM_TOKEN
  --wait-slots <n>          concurrent long-polls, 0 = off    MAILROOM_WAIT_SLOTS  (default ${DEFAULTS.waitSlots}; MCP waits have their own 8)
  --enable-faults           serve the test fault switch       MAILROOM_ENABLE_FAULTS=1
  -h, --help                show this help
  -v, --version             show the version

API: GET|DELETE /api/v1/mailbox?address=A, GET /api/v1/mailbox/wait?address=A&since_id=ID,
     GET|DELETE /api/v1/message/{id}?mailbox=A, GET /api/v1/message/{id}/raw?mailbox=A,
     GET /healthz; MCP (streamable HTTP): POST /mcp`;

class UsageError extends Error {}

const version = packageVersion;

function integer(value: string, flag: string, envName: string, min: number, max: number, what: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`mailroom serve: ${flag} (or ${envName}) must be ${what}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** Builds startServer options from argv and the environment (flags win). Exported for tests. */
export function optionsFrom(argv: readonly string[], env: NodeJS.ProcessEnv): { options: ServerOptions; help: boolean; version: boolean } {
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
        token: { type: 'string' },
        'wait-slots': { type: 'string' },
        'enable-faults': { type: 'boolean' },
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
    const fromEnv = env[envName];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const options: ServerOptions = {};

  const smtpPort = pick('smtp-port', 'MAILROOM_SMTP_PORT');
  if (smtpPort !== undefined) options.smtpPort = integer(smtpPort, '--smtp-port', 'MAILROOM_SMTP_PORT', 0, 65535, 'a port from 0 to 65535');
  const httpPort = pick('http-port', 'MAILROOM_HTTP_PORT');
  if (httpPort !== undefined) options.httpPort = integer(httpPort, '--http-port', 'MAILROOM_HTTP_PORT', 0, 65535, 'a port from 0 to 65535');
  const host = pick('host', 'MAILROOM_HOST');
  if (host !== undefined) options.host = host;

  const domains = v.domain ?? env.MAILROOM_DOMAIN?.split(',').map((d) => d.trim()).filter(Boolean);
  if (domains && domains.length > 0) options.domains = domains;

  const retention = pick('retention', 'MAILROOM_RETENTION');
  if (retention !== undefined) {
    const ms = parseDuration(retention);
    if (ms === undefined || ms <= 0) {
      throw new UsageError(`mailroom serve: --retention (or MAILROOM_RETENTION) must be a duration such as 90s, 30m, 1h or 2d, got ${JSON.stringify(retention)}`);
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
    options.maxMessageBytes = integer(maxBytes, '--max-message-bytes', 'MAILROOM_MAX_MESSAGE_BYTES', 1024, Number.MAX_SAFE_INTEGER, 'a whole number of bytes, at least 1024');
  }
  const waitSlots = pick('wait-slots', 'MAILROOM_WAIT_SLOTS');
  if (waitSlots !== undefined) {
    options.waitSlots = integer(waitSlots, '--wait-slots', 'MAILROOM_WAIT_SLOTS', 0, 100_000, 'a whole number from 0 to 100000 (0 turns the long-poll off)');
  }
  const token = pick('token', 'MAILROOM_TOKEN');
  if (token !== undefined) options.token = token;
  if (v['enable-faults'] === true || /^(1|true|yes)$/i.test(env.MAILROOM_ENABLE_FAULTS ?? '')) options.faultInjection = true;

  return { options, help: v.help === true, version: v.version === true };
}

const cliLogger: Logger = {
  info: (message) => console.log(message),
  warn: (message) => console.error(message),
  error: (message) => console.error(message),
};

/** Runs the command; resolves to the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(HELP);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    console.log(version());
    return 0;
  }
  if (command === 'mcp') return mcp(rest, env);
  if (command !== 'serve') {
    console.error(command === undefined
      ? `mailroom: missing command.\n\n${HELP}`
      : `mailroom: unknown command ${JSON.stringify(command)}; the commands are \`mailroom serve\` and \`mailroom mcp\`. Run \`mailroom --help\`.`);
    return 2;
  }

  let parsed;
  try {
    parsed = optionsFrom(rest, env);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  if (parsed.help) {
    console.log(HELP);
    return 0;
  }
  if (parsed.version) {
    console.log(version());
    return 0;
  }

  let server;
  try {
    server = await startServer({ ...parsed.options, logger: cliLogger });
  } catch (error) {
    const e = error as Error & { code?: string };
    if (e instanceof TypeError) {
      console.error(`mailroom serve: ${e.message}`);
      return 2;
    }
    if (e.code === 'EADDRINUSE') {
      const which = /for SMTP/.test(e.message) ? '--smtp-port (MAILROOM_SMTP_PORT)' : '--http-port (MAILROOM_HTTP_PORT)';
      console.error(`${e.message}. Stop whatever uses it, or pick another port with ${which}; 0 picks any free port.`);
      return 1;
    }
    console.error(e.message);
    return 1;
  }

  const host = server.apiURL.replace(/^http:\/\//, '').replace(/:\d+$/, '');
  console.log(`mailroom: SMTP listening on ${host}:${server.smtpPort} for ${server.domains.join(', ')}`);
  console.log(`mailroom: HTTP API listening on ${server.apiURL}/api/v1 (MCP: ${server.apiURL}/mcp)`);

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  console.log(`mailroom: ${signal} received, shutting down`);
  // A second signal while closing means "now".
  const force = () => process.exit(1);
  process.once('SIGINT', force);
  process.once('SIGTERM', force);
  await server.close();
  return 0;
}

/** `mailroom mcp`: stdout belongs to the protocol, so everything else goes to stderr. */
async function mcp(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: { 'api-url': { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
  } catch (error) {
    console.error(`mailroom mcp: ${(error as Error).message}. Run \`mailroom --help\` for the options.`);
    return 2;
  }
  if (values.help) {
    console.error(HELP);
    return 0;
  }
  const apiURL = values['api-url'] ?? (env.MAILROOM_API_URL?.trim() || 'http://127.0.0.1:8025');
  const token = values.token ?? (env.MAILROOM_TOKEN?.trim() || undefined);
  // Loaded here so `mailroom serve` does not load the client.
  const { runStdioProxy } = await import('./mcp-stdio.js');
  try {
    await runStdioProxy({ apiURL, token });
  } catch (error) {
    if (error instanceof TypeError) {
      console.error(`mailroom mcp: ${error.message}`);
      return 2;
    }
    throw error;
  }
  return 0;
}
