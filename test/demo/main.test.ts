// fixtures/demo-app/main.ts as a user runs it: a child process reading env vars.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { fetch } from 'undici';
import { startSmtpSink } from '../../fixtures/smtp-sink.js';
import { freshAddress, postJson } from './context.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

// Node with tsx's loader, as e2e/servers.ts starts it for Playwright, so the
// SIGTERM reaches the app itself. The `tsx` command would put a process in
// between that gives the app 30 ms to report the signal before it kills it
// (exit 143), which a loaded machine misses.
function run(env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', 'fixtures/demo-app/main.ts'], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

test('prints its URL when ready, sends through MAILROOM_SMTP_*, and stops on SIGTERM', async () => {
  const sink = await startSmtpSink();
  const child = run({ DEMO_PORT: '0', MAILROOM_SMTP_HOST: '127.0.0.1', MAILROOM_SMTP_PORT: String(sink.port) });
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const url = /^Acme demo app ready at (http:\/\/127\.0\.0\.1:\d+) \(sending mail through SMTP 127\.0\.0\.1:(\d+)\)$/.exec(line);
    expect(url, `unexpected first line: ${line}`).not.toBeNull();
    expect(url![2]).toBe(String(sink.port));

    expect((await fetch(`${url![1]}/`)).status).toBe(200);
    const email = freshAddress('script');
    expect((await postJson(`${url![1]}/api/signup`, { email })).status).toBe(202);
    expect(sink.messages.map((m) => m.rcptTo[0])).toEqual([email, email]);

    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  } finally {
    child.kill('SIGKILL');
    await sink.close();
  }
});

/** Runs the app with `env`, which it must refuse: its exit code and what it printed on stderr. */
async function refusedStart(env: Record<string, string>): Promise<{ code: unknown; stderr: string }> {
  const child = run(env);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [code] = await once(child, 'exit');
  return { code, stderr };
}

test('refuses a malformed env var with a message naming it, and exits 1', async () => {
  const { code, stderr } = await refusedStart({ DEMO_PORT: 'eighty' });
  expect(code).toBe(1);
  expect(stderr).toContain('Acme demo app could not start: Expected DEMO_PORT to be a whole number, got "eighty"');
});

test('DEMO_OUTBOX=1 turns the outbox on; any value but 0 or 1 is refused', async () => {
  const sink = await startSmtpSink();
  const child = run({ DEMO_PORT: '0', MAILROOM_SMTP_PORT: String(sink.port), DEMO_OUTBOX: '1' });
  try {
    const [line] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
    const url = /ready at (\S+)/.exec(line)![1]!;
    const email = freshAddress('outbox');
    await postJson(`${url}/api/signup`, { email });
    const res = await fetch(`${url}/api/outbox?${new URLSearchParams({ to: email })}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { mails: unknown[] }).mails).toHaveLength(2);
  } finally {
    child.kill('SIGKILL');
    await sink.close();
  }

  const { code, stderr } = await refusedStart({ DEMO_OUTBOX: 'yes' });
  expect(code).toBe(1);
  expect(stderr).toContain('Acme demo app could not start: Expected DEMO_OUTBOX to be 1 (on) or 0 (off), got "yes"');
});
