// The Playwright adapter's own logic, outside a Playwright run: the clock
// that keeps waits inside the test's deadline, the webServer helper (its
// command really starts `mailroom serve`), and the Chromium advice the demo
// prints. The e2e suite proves the rest inside real Playwright runs.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { mailroomWebServer } from 'mailroomjs/playwright';
import { teardownTimeLeftClock, timeLeftClock } from '../../src/playwright/fixtures.js';
import { findChromium } from '../../e2e/chromium.js';
import { freePort } from '../support/free-port.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('timeLeftClock', () => {
  it('counts down from the test timeout, and follows test.setTimeout()', () => {
    const info = { timeout: 30_000, duration: 0 };
    const left = timeLeftClock(info, performance.now() - 10_000);
    expect(left()).toBeGreaterThan(19_000);
    expect(left()).toBeLessThanOrEqual(20_000);
    info.timeout = 90_000;
    expect(left()).toBeGreaterThan(79_000);
  });

  it('has no deadline when the timeout is 0, or once the body is over', () => {
    const info = { timeout: 0, duration: 0 };
    const left = timeLeftClock(info, performance.now());
    expect(left()).toBeUndefined();
    info.timeout = 30_000;
    info.duration = 1_200;
    expect(left()).toBeUndefined();
  });
});

describe('teardownTimeLeftClock', () => {
  it('counts the after-hooks slot (the larger of the project and test timeouts) from the end of the body', () => {
    const info = { timeout: 3_000, duration: 0, project: { timeout: 10_000 } };
    const left = teardownTimeLeftClock(info, performance.now() - 2_500);
    // The body is still running: no teardown yet.
    expect(left()).toBeUndefined();
    info.duration = 2_000; // so the body ended about 500 ms ago
    expect(left()).toBeGreaterThan(9_000);
    expect(left()).toBeLessThanOrEqual(9_500);
    info.timeout = 0; // no timeout: no limit on teardown either
    expect(left()).toBeUndefined();
  });
});

describe('mailroomWebServer', () => {
  it('is a webServer entry that waits for /healthz', () => {
    const entry = mailroomWebServer({ smtpPort: 2626, httpPort: 8126, domains: ['acme.test'], reuseExistingServer: false });
    expect(entry).toMatchObject({ name: 'mailroom', url: 'http://127.0.0.1:8126/healthz', reuseExistingServer: false, timeout: 30_000 });
    expect(entry.command).toContain('serve --smtp-port 2626 --http-port 8126 --host 127.0.0.1 --domain acme.test');
  });

  it('names a bad option', () => {
    expect(() => mailroomWebServer({ httpPort: 0 })).toThrow('Expected `httpPort` to be a port from 1 to 65535, got 0');
    expect(() => mailroomWebServer({ smtpPort: 70000 })).toThrow('Expected `smtpPort` to be a port from 1 to 65535, got 70000');
    expect(() => mailroomWebServer({ timeout: -1 })).toThrow('Expected `timeout` to be a positive number of milliseconds, got -1');
  });

  it('runs a real server with its command, as Playwright would (sh -c)', async () => {
    const [smtpPort, httpPort] = [await freePort(), await freePort()];
    const entry = mailroomWebServer({ smtpPort, httpPort });
    const child = spawn('/bin/sh', ['-c', `exec ${entry.command}`], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    try {
      const answer = await poll(async () => {
        const { statusCode, body } = await request(entry.url!);
        return statusCode === 200 ? body.json() : undefined;
      }, 15_000);
      expect(answer).toMatchObject({ ok: true });
      expect(output).toContain(`SMTP listening on 127.0.0.1:${smtpPort}`);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });
});

describe('findChromium', () => {
  it('without any Chromium, says exactly what to run', () => {
    const find = () => findChromium({ env: {}, debianPaths: ['/nowhere/chromium'], downloadedPath: () => undefined });
    expect(find).toThrow(/^No Chromium found for the e2e tests\. Looked at:\n {2}- MAILROOM_CHROMIUM \(not set\)\n {2}- \/nowhere\/chromium \(missing\)/);
    expect(find).toThrow('sudo apt-get install -y chromium-headless-shell (or chromium)');
    expect(find).toThrow('npx playwright install chromium');
    expect(find).toThrow('MAILROOM_CHROMIUM=/path/to/chromium');
  });
});

describe('npm run demo', () => {
  it('stops before starting anything when there is no Chromium, and prints what to run', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], {
      cwd: ROOT,
      env: { ...process.env, MAILROOM_CHROMIUM: '/nowhere/chromium' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise((resolve) => child.once('close', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('demo: MAILROOM_CHROMIUM is set to /nowhere/chromium, but there is no file there.');
    expect(stderr).toContain('  - Debian/Ubuntu: sudo apt-get install -y chromium-headless-shell (or chromium)');
    expect(stdout).toBe('');
  });
});

async function poll<T>(attempt: () => Promise<T | undefined>, withinMs: number): Promise<T> {
  const until = performance.now() + withinMs;
  let last: unknown;
  while (performance.now() < until) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready within ${withinMs} ms: ${String(last)}`);
}
