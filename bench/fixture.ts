// Fixture overhead (issue 4): what the `inbox` fixture adds to a test, setup
// plus teardown, against the embedded server in its own process (real HTTP).
//
//  1. The core path the fixture runs, openTestInbox() then close(): a
//     fresh address, the watermark read (one list call), the mailbox delete.
//  2. The Playwright fixture itself: a real Playwright run of tests that
//     only take `inbox`, timed by Playwright's own fixture steps (whole
//     milliseconds), so it includes what Playwright adds around it.
// Goal: median setup + teardown at most 5 ms.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { openTestInbox, type TestRunnerBridge } from '../src/index.js';
import type { BenchSection } from './run.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CORE_SAMPLES = Number(process.env.BENCH_FIXTURE_SAMPLES ?? 300);
const CORE_WARMUP = 30;
const PLAYWRIGHT_TESTS = Number(process.env.BENCH_FIXTURE_TESTS ?? 200);
const GOAL_MS = 5;

export interface FixtureBenchResults {
  readonly core: { readonly setupMs: readonly number[]; readonly teardownMs: readonly number[]; readonly totalMs: readonly number[] };
  readonly playwright: { readonly setupMs: readonly number[]; readonly teardownMs: readonly number[]; readonly totalMs: readonly number[] };
}

export async function runFixtureBench(): Promise<FixtureBenchResults> {
  const server = await startServerProcess();
  try {
    const core = await coreSamples(server.apiURL);
    const playwright = await playwrightSamples(server.apiURL);
    return { core, playwright };
  } finally {
    await server.stop();
  }
}

/** The bridge a runner would give, doing nothing a runner would not. */
const bridge: TestRunnerBridge = {
  title: 'bench fixture',
  step: (_title, run) => run(),
  attach: () => {},
  note: (message) => {
    throw new Error(`unexpected note: ${message}`);
  },
  timeLeft: () => 30_000,
};

async function coreSamples(apiURL: string): Promise<FixtureBenchResults['core']> {
  const setupMs: number[] = [];
  const teardownMs: number[] = [];
  const totalMs: number[] = [];
  for (let i = 0; i < CORE_WARMUP + CORE_SAMPLES; i++) {
    const started = performance.now();
    const { close } = await openTestInbox({ apiURL }, bridge);
    const opened = performance.now();
    await close({ failed: false });
    const closed = performance.now();
    if (i < CORE_WARMUP) continue;
    setupMs.push(opened - started);
    teardownMs.push(closed - opened);
    totalMs.push(closed - started);
  }
  return { setupMs, teardownMs, totalMs };
}

async function playwrightSamples(apiURL: string): Promise<FixtureBenchResults['playwright']> {
  const dir = await mkdtemp(join(tmpdir(), 'mailroom-bench-fixture-'));
  const reportFile = join(dir, 'durations.json');
  try {
    const cli = createRequire(import.meta.url).resolve('@playwright/test/cli');
    const env = { ...process.env, MAILROOM_API_URL: apiURL, BENCH_FIXTURE_REPORT: reportFile, BENCH_FIXTURE_OUTPUT: join(dir, 'results'), BENCH_FIXTURE_TESTS: String(PLAYWRIGHT_TESTS) };
    const child = spawn(process.execPath, [cli, 'test', '--config', join(ROOT, 'bench', 'fixture', 'playwright.config.ts')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const report = JSON.parse(await readFile(reportFile, 'utf8').catch(() => 'null')) as { setup: number[]; teardown: number[]; failures: string[] } | null;
    if (code !== 0 || !report || report.failures.length > 0) throw new Error(`the fixture bench run failed (exit ${code}):\n${report?.failures.join('\n') ?? ''}\n${output}`);
    // The first test of the worker also loads modules and opens the connection pool.
    const setupMs = report.setup.slice(1);
    const teardownMs = report.teardown.slice(1);
    return { setupMs, teardownMs, totalMs: setupMs.map((ms, i) => ms + (teardownMs[i] ?? Number.NaN)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const fixtureBench: BenchSection = {
  name: 'fixture',
  description: 'inbox fixture overhead: setup (fresh address, watermark read) plus teardown (mailbox delete)',
  async run() {
    console.log('Embedded server in its own process, real HTTP on loopback, one test at a time.');
    const r = await runFixtureBench();
    console.log(`\n1. openTestInbox() + close(), the core path the fixture runs (${CORE_WARMUP} warm-up rounds dropped):`);
    console.log(`   setup    ${describe(r.core.setupMs)}`);
    console.log(`   teardown ${describe(r.core.teardownMs)}`);
    console.log(`   total    ${describe(r.core.totalMs)}`);
    console.log(`   goal median <= ${GOAL_MS} ms: ${verdict(percentile(r.core.totalMs, 50) <= GOAL_MS)}`);
    console.log(`\n2. The Playwright \`inbox\` fixture, from Playwright's own fixture steps (whole ms; a worker's first test dropped):`);
    console.log(`   setup    ${describe(r.playwright.setupMs)}`);
    console.log(`   teardown ${describe(r.playwright.teardownMs)}`);
    console.log(`   total    ${describe(r.playwright.totalMs)}`);
    console.log(`   goal median <= ${GOAL_MS} ms: ${verdict(percentile(r.playwright.totalMs, 50) <= GOAL_MS)}`);
  },
};

// --- the server process and numbers -------------------------------------------------

async function startServerProcess(): Promise<{ apiURL: string; stop(): Promise<void> }> {
  const [smtpPort, httpPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, ['dist/cli.js', 'serve', '--smtp-port', String(smtpPort), '--http-port', String(httpPort)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const apiURL = `http://127.0.0.1:${httpPort}`;
  const deadline = performance.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`mailroom serve exited early:\n${output}`);
    try {
      const response = await request(`${apiURL}/healthz`);
      await response.body.text();
      if (response.statusCode === 200) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`mailroom serve not ready after 30 s:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    apiURL,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

function describe(values: readonly number[]): string {
  const f = (ms: number) => `${ms.toFixed(2)} ms`;
  return `p50 ${f(percentile(values, 50))}, p90 ${f(percentile(values, 90))}, p99 ${f(percentile(values, 99))}, max ${f(Math.max(...values))} (n=${values.length})`;
}

function verdict(ok: boolean): string {
  return ok ? 'MET' : 'MISSED';
}
