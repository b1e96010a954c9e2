// Secrets out of sight (issue 44, item 7): the API token and the webhook
// secret from a file or the environment, a warning when one comes from the
// command line (where `ps` shows it to every local user), and no secret in
// any error. In process: `mailroom serve`'s and `mailroom mcp`'s option
// readers (cli.test.ts runs the built command once with a token file).
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpOptionsFrom } from '../../src/cli/mcp-options.js';
import { optionsFrom, UsageError } from '../../src/cli/serve-options.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { scratchDirs } from '../support/scratch-dirs.js';

const scratchDir = scratchDirs('mailroom-cli-secrets-');

/** A file holding `content`, readable by its owner only, as a secret's file should be. */
function secretFile(content: string): string {
  const path = join(scratchDir(), 'secret');
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

function usageError(read: () => unknown): string {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
}

const hook = ['--webhook', 'http://127.0.0.1:9/hook'];

describe('the token and the webhook secret', () => {
  it('are read from --token-file and --webhook-secret-file (or their _FILE variables), trimmed, without a warning', () => {
    const token = secretFile('t0k3n-from-a-file\n');
    const signing = secretFile('  whsec-from-a-file  \n');
    const fromFlags = optionsFrom(['--token-file', token, ...hook, '--webhook-secret-file', signing], {});
    expect(fromFlags.options.token).toBe('t0k3n-from-a-file');
    expect(fromFlags.options.staticWebhooks).toEqual([{ url: 'http://127.0.0.1:9/hook', secret: 'whsec-from-a-file' }]);
    expect(fromFlags.warnings).toEqual([]);
    const fromEnv = optionsFrom(hook, { MAILROOM_TOKEN_FILE: token, MAILROOM_WEBHOOK_SECRET_FILE: signing });
    expect([fromEnv.options.token, fromEnv.options.staticWebhooks?.[0]?.secret, fromEnv.warnings]).toEqual(['t0k3n-from-a-file', 'whsec-from-a-file', []]);
    // The variables themselves, as before: no warning either.
    expect(optionsFrom([], { MAILROOM_TOKEN: 'env-token' })).toMatchObject({ options: { token: 'env-token' }, warnings: [] });
    // Flags win over the environment, as for every option.
    expect(optionsFrom(['--token-file', token], { MAILROOM_TOKEN: 'env-token' }).options.token).toBe('t0k3n-from-a-file');
  });

  it('given on the command line, are taken with a warning that names the environment and the file', () => {
    const { options, warnings } = optionsFrom(['--token', 'argv-token', ...hook, '--webhook-secret', 'argv-secret'], {});
    expect([options.token, options.staticWebhooks?.[0]?.secret]).toEqual(['argv-token', 'argv-secret']);
    expect(warnings).toEqual([
      expect.stringMatching(/^mailroom serve: warning: --token on the command line can be read by every user of this machine \(`ps` shows it/),
      expect.stringContaining('--webhook-secret on the command line'),
    ]);
    expect(warnings[0]).toContain('set MAILROOM_TOKEN, or put it in a file readable only by you and pass --token-file FILE (MAILROOM_TOKEN_FILE)');
    for (const warning of warnings) expect(warning).not.toMatch(/argv-token|argv-secret/);
    const mcp = mcpOptionsFrom(['--token', 'argv-token'], {});
    expect(mcp.token).toBe('argv-token');
    expect(mcp.warnings).toEqual([expect.stringContaining('mailroom mcp: warning: --token on the command line')]);
  });

  it('refuse an unreadable, empty or many-word file, and a flag with its file, naming the flag and never the contents', () => {
    const dir = scratchDir();
    expect(usageError(() => optionsFrom(['--token-file', join(dir, 'missing')], {}))).toBe(
      `mailroom serve: --token-file must name a readable file holding the API token, but ${JSON.stringify(join(dir, 'missing'))} cannot be read (ENOENT)`,
    );
    expect(usageError(() => optionsFrom([], { MAILROOM_TOKEN_FILE: secretFile(' \n') }))).toMatch(
      /^mailroom serve: MAILROOM_TOKEN_FILE names ".*", which is empty/,
    );
    const twoLines = secretFile('s3cret-line-one\ns3cret-line-two\n');
    const many = usageError(() => mcpOptionsFrom(['--token-file', twoLines], {}));
    expect(many).toMatch(/^mailroom mcp: --token-file names ".*", which holds more than the API token/);
    expect(many).not.toContain('s3cret');
    expect(usageError(() => optionsFrom(['--token', 'x', '--token-file', twoLines], {}))).toBe('mailroom serve: give --token or --token-file, not both');
    expect(usageError(() => optionsFrom(hook, { MAILROOM_WEBHOOK_SECRET: 'x', MAILROOM_WEBHOOK_SECRET_FILE: twoLines }))).toBe(
      'mailroom serve: set MAILROOM_WEBHOOK_SECRET or MAILROOM_WEBHOOK_SECRET_FILE, not both',
    );
    if (process.getuid?.() !== 0) {
      // Root reads any file, whatever its mode.
      const locked = secretFile('t');
      chmodSync(locked, 0o000);
      expect(usageError(() => optionsFrom(['--token-file', locked], {}))).toContain('cannot be read (EACCES)');
    }
  });

  it('a malformed token is refused without being shown', () => {
    expect(() => resolveServerOptions({ token: 'my real token' })).toThrow(
      'Expected `token` to be a non-empty string of printable ASCII without spaces, got "(not shown)"',
    );
    expect(() => resolveServerOptions({ token: '' })).toThrow('got ""');
  });
});

describe('a password in a URL', () => {
  it('is masked in the usage error for --store, and a --store URL that carries one is taken with a warning', () => {
    const message = usageError(() => optionsFrom(['--store', 'redis://:hunter2secret@127.0.0.1:1/99'], {}));
    expect(message).toContain('got "redis://:***@127.0.0.1:1/99"');
    expect(message).not.toContain('hunter2secret');
    const { options, warnings } = optionsFrom(['--store', 'redis://:hunter2secret@127.0.0.1:6379/0'], {});
    expect(options.store).toBe('redis://:hunter2secret@127.0.0.1:6379/0');
    expect(warnings).toEqual([expect.stringContaining("--store's URL carries a password")]);
    expect(warnings[0]).not.toContain('hunter2secret');
    expect(optionsFrom([], { MAILROOM_STORE: 'redis://:hunter2secret@127.0.0.1:6379/0' }).warnings).toEqual([]);
  });
});
