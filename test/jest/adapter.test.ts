// mailroomjs/jest under real Jest, 30 and 29, from the CommonJS build
// (dist/cjs/jest.cjs: `npm run build` first, as the suite does), against the
// embedded server through real sockets: test/jest/fixture/adapter.test.cjs
// runs three tests, one failing on purpose, and this file checks Jest's
// verdicts and what mailroom printed. What Jest's runner state tells
// (src/jest/circus-state.ts: the failure, the names) is read from the
// private state of the Jest version each run uses.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = 'test/jest/fixture/jest.config.cjs';

interface JestJson {
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly testResults: readonly {
    readonly assertionResults: readonly { readonly title: string; readonly status: string; readonly failureMessages: readonly string[] }[];
  }[];
}

async function runJest(bin: string): Promise<{ code: number | null; output: string; json: JestJson }> {
  const outputFile = join(await mkdtemp(join(tmpdir(), 'mailroom-jest-')), 'result.json');
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '1' };
  for (const name of ['MAILROOM_API_URL', 'MAILROOM_DOMAIN', 'MAILROOM_TOKEN', 'MAILROOM_BACKEND']) delete env[name];
  const child = spawn(process.execPath, [join(ROOT, bin), '--config', CONFIG, '--ci', '--runInBand', '--json', '--outputFile', outputFile], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, output: stripVTControlCharacters(output), json: JSON.parse(readFileSync(outputFile, 'utf8')) as JestJson };
}

describe.each([
  ['Jest 30', 'node_modules/jest/bin/jest.js'],
  ['Jest 29', 'node_modules/jest-29/bin/jest.js'],
])('useInbox under %s', (_name, bin) => {
  it('opens an inbox per test, deletes it after a pass, keeps it after a failure, and prints the failed test mail', { timeout: 60_000 }, async () => {
    const { code, output, json } = await runJest(bin);
    const results = json.testResults.flatMap((file) => file.assertionResults);
    expect(
      results.map(({ title, status }) => `${status} ${title}`),
      output,
    ).toEqual([
      'passed passes and leaves no mailbox',
      'failed fails and keeps its mailbox',
      'passed finds the passing test mailbox deleted and the failed one kept',
    ]);
    expect(code).toBe(1);
    const failure = results[1]!.failureMessages.join('\n');
    expect(failure).toMatch(/No mail matching subject ~ "Invoice" arrived at fails-and-keeps-its-mailbox-[a-z0-9]+@mailroom\.test within 500 ms/);
    expect(failure).toContain('Seen and rejected: "Welcome" from app@acme.example');
    // keepOnFailure's note, naming the test, and the failed test's mail: Jest's failure state was read.
    expect(output).toMatch(
      /mailroom kept the mailbox of this failed test: fails-and-keeps-its-mailbox-[a-z0-9]+@mailroom\.test \(test: test\/jest\/fixture\/adapter\.test\.cjs > kept > fails and keeps its mailbox\)/,
    );
    expect(output).toMatch(/mailroom: the mail of the failed test test\/jest\/fixture\/adapter\.test\.cjs > kept > fails and keeps its mailbox/);
    // A passing test prints nothing of its mail.
    expect(output).not.toMatch(/the mail of the failed test .*passes and leaves no mailbox/);
  });
});
