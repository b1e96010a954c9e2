// A secret the command line takes (the API token, the webhook secret): from
// a file (`--token-file PATH`, or `MAILROOM_TOKEN_FILE`), from the
// environment (`MAILROOM_TOKEN`), or from the flag itself (`--token`). A
// flag's value stands in the process list for as long as the command runs,
// where `ps` shows it to every user of the machine, and in the shell's
// history; it is still taken (a laptop's own server, a quick try), with a
// warning that names the ways that are not seen. Flags win over the
// environment, as for every option; a flag and its file together, or the
// two variables together, are a mistake.
import { readFileSync } from 'node:fs';
import { fromEnv } from '../contract/validation.js';
import { UsageError } from './usage-error.js';

/** What one secret is called: `flag` is `--flag` and `--flag-file`, `envName` is `ENV` and `ENV_FILE`. */
export interface SecretNames {
  /** `mailroom serve` or `mailroom mcp`: how every message starts. */
  readonly command: string;
  readonly flag: string;
  readonly envName: string;
  /** What the file holds, in words: `the API token`. */
  readonly what: string;
}

export interface Secret {
  /** Undefined when none was given. */
  readonly value: string | undefined;
  /** Set when the value came from the command line: what to print on stderr. */
  readonly warning?: string;
}

/** A token or a signing secret: printable ASCII, no spaces (the server's own rule for both). */
const ONE_WORD = /^[\x21-\x7e]+$/;

function readSecretFile(path: string, source: string, names: SecretNames): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `${names.command}: ${source} must name a readable file holding ${names.what}, but ${JSON.stringify(path)} cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  const value = text.trim();
  if (value === '') throw new UsageError(`${names.command}: ${source} names ${JSON.stringify(path)}, which is empty; it must hold ${names.what}`);
  if (!ONE_WORD.test(value)) {
    throw new UsageError(
      `${names.command}: ${source} names ${JSON.stringify(path)}, which holds more than ${names.what}: it must be one word of printable ASCII (spaces and line breaks inside it, or other characters, are not taken; the file is not shown)`,
    );
  }
  return value;
}

/** The secret from the parsed flags (`values[flag]`, `values[flag + '-file']`) and the environment. */
export function secretOption(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv, names: SecretNames): Secret {
  const flag = `--${names.flag}`;
  const fileFlag = `${flag}-file`;
  const fileEnv = `${names.envName}_FILE`;
  const given = values[names.flag] as string | undefined;
  const file = values[`${names.flag}-file`] as string | undefined;
  if (given !== undefined && file !== undefined) throw new UsageError(`${names.command}: give ${flag} or ${fileFlag}, not both`);
  if (file !== undefined) return { value: readSecretFile(file, fileFlag, names) };
  if (given !== undefined) {
    return {
      value: given,
      warning: `${names.command}: warning: ${flag} on the command line can be read by every user of this machine (\`ps\` shows it while the process runs) and stays in the shell's history; set ${names.envName}, or put it in a file readable only by you and pass ${fileFlag} FILE (${fileEnv})`,
    };
  }
  const fromVariable = fromEnv(env[names.envName]);
  const fromFile = fromEnv(env[fileEnv]);
  if (fromVariable !== undefined && fromFile !== undefined) throw new UsageError(`${names.command}: set ${names.envName} or ${fileEnv}, not both`);
  if (fromFile !== undefined) return { value: readSecretFile(fromFile, fileEnv, names) };
  return { value: fromVariable };
}
