// The `mailroom` command line: `mailroom serve` runs the embedded server (one
// line per listener when ready, a clean exit on SIGINT/SIGTERM); `mailroom
// mcp` serves the MCP tools on stdio in front of any mailbox HTTP API.
import { packageVersion } from '../contract/package-version.js';
import { API_BASE, MCP_PATH } from '../contract/routes.js';
import { startServer, type Logger } from '../server/index.js';
import { describeRedisUrl } from '../server/store/store-location.js';
import { HELP } from './help.js';
import { mcpOptionsFrom } from './mcp-options.js';
import { installProcessGuards } from './process-guards.js';
import { optionsFrom } from './serve-options.js';
import { UsageError } from './usage-error.js';

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
    console.log(packageVersion());
    return 0;
  }
  if (command === 'mcp') return mcp(rest, env);
  if (command !== 'serve') {
    console.error(
      command === undefined
        ? `mailroom: missing command.\n\n${HELP}`
        : `mailroom: unknown command ${JSON.stringify(command)}; the commands are \`mailroom serve\` and \`mailroom mcp\`. Run \`mailroom --help\`.`,
    );
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
    console.log(packageVersion());
    return 0;
  }
  for (const warning of parsed.warnings) console.error(warning);

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
      const which = /for SMTPS /.test(e.message)
        ? '--smtps-port (MAILROOM_SMTPS_PORT)'
        : /for SMTP /.test(e.message)
          ? '--smtp-port (MAILROOM_SMTP_PORT)'
          : '--http-port (MAILROOM_HTTP_PORT)';
      console.error(`${e.message}. Stop whatever uses it, or pick another port with ${which}; 0 picks any free port.`);
      return 1;
    }
    console.error(e.message);
    return 1;
  }

  const host = server.apiURL.replace(/^http:\/\//, '').replace(/:\d+$/, '');
  const starttls = parsed.options.smtpRequireTls ? ' (STARTTLS required)' : parsed.options.smtpTls ? ' (STARTTLS offered)' : '';
  console.log(`mailroom: SMTP listening on ${host}:${server.smtpPort} for ${server.domains.join(', ')}${starttls}`);
  if (server.smtpsPort !== undefined) console.log(`mailroom: SMTPS (implicit TLS) listening on ${host}:${server.smtpsPort}`);
  console.log(`mailroom: HTTP API listening on ${server.apiURL}${API_BASE} (MCP: ${server.apiURL}${MCP_PATH}; web UI: ${server.apiURL}/)`);
  if (server.providers) {
    const env = Object.entries(server.providers.env).map(([name, value]) => `${name}=${value}`);
    console.log(
      `mailroom: provider APIs (Resend, SES, SendGrid, Postmark, Mailgun, Brevo) at ${server.apiURL}: set ${env.join(' ')} for the app; the other SDKs take it as an option (docs/providers.md)`,
    );
  }
  if (parsed.options.store !== undefined && parsed.options.store !== 'memory') console.log(`mailroom: mail kept in ${describeRedisUrl(parsed.options.store)}`);

  const unguard = installProcessGuards(cliLogger);
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
  unguard();
  return 0;
}

/**
 * `mailroom mcp`: once it serves, stdout belongs to the protocol, so its
 * messages go to stderr; `--help` serves nothing and prints to stdout, like
 * `mailroom serve --help`.
 */
async function mcp(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let options;
  try {
    options = mcpOptionsFrom(argv, env);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      return 2;
    }
    throw error;
  }
  if (options.help) {
    console.log(HELP);
    return 0;
  }
  for (const warning of options.warnings) console.error(warning);
  const { apiURL, token } = options;
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
