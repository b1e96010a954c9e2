// `mailroom mcp`'s flags and environment variables: the service's URL
// (`--api-url`, `MAILROOM_API_URL`) and its token (`--token`,
// `--token-file`, `MAILROOM_TOKEN`, `MAILROOM_TOKEN_FILE`; secret-option.ts).
// An agent's MCP configuration passes `args` on a command line, where every
// user of the machine can read them, so the token belongs in its `env`.
import { parseArgs } from 'node:util';
import { DEFAULT_API_URL } from '../contract/defaults.js';
import { fromEnv } from '../contract/validation.js';
import { secretOption } from './secret-option.js';
import { UsageError } from './usage-error.js';

export interface McpOptions {
  readonly apiURL: string;
  readonly token: string | undefined;
  readonly help: boolean;
  /** What to print on stderr before serving. */
  readonly warnings: readonly string[];
}

/** Reads argv and the environment (flags win). Exported for tests. */
export function mcpOptionsFrom(argv: readonly string[], env: NodeJS.ProcessEnv): McpOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      allowPositionals: false,
      strict: true,
      options: { 'api-url': { type: 'string' }, token: { type: 'string' }, 'token-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }));
  } catch (error) {
    throw new UsageError(`mailroom mcp: ${(error as Error).message}. Run \`mailroom --help\` for the options.`);
  }
  const help = values.help === true;
  if (help) return { apiURL: DEFAULT_API_URL, token: undefined, help, warnings: [] };
  const token = secretOption(values, env, { command: 'mailroom mcp', flag: 'token', envName: 'MAILROOM_TOKEN', what: 'the API token' });
  return {
    apiURL: values['api-url'] ?? fromEnv(env.MAILROOM_API_URL) ?? DEFAULT_API_URL,
    token: token.value,
    help,
    warnings: token.warning ? [token.warning] : [],
  };
}
