// Fixture overhead (issue 4): what the `inbox` fixture adds to a test, setup
// plus teardown, against the embedded server in its own process (real HTTP).
//
//  1. The core path the fixture runs, openTestInbox() then close(): a
//     fresh address (its watermark "nothing yet": no list call; one /healthz
//     per process), the mailbox delete.
//  2. The Playwright fixture itself: a real Playwright run of tests that
//     only take `inbox`, timed by Playwright's own fixture steps (whole
//     milliseconds), so it includes what Playwright adds around it.
// Goal: median setup + teardown at most 5 ms.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTestInbox, type TestRunnerBridge } from '../src/runner/index.js';
import type { BenchSection } from './section.js';
import { describe, formatMs, percentile, ROOT, startChild, startServerProcess, verdict } from './support.js';

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
  titlePath: 'bench > fixture',
  step: (_title, run) => run(),
  attach: () => {},
  annotate: (message) => {
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
    const env = {
      ...process.env,
      MAILROOM_API_URL: apiURL,
      BENCH_FIXTURE_REPORT: reportFile,
      BENCH_FIXTURE_OUTPUT: join(dir, 'results'),
      BENCH_FIXTURE_TESTS: String(PLAYWRIGHT_TESTS),
    };
    const run = startChild(process.execPath, [cli, 'test', '--config', join(ROOT, 'bench', 'fixture', 'playwright.config.ts')], env);
    const code = await new Promise<number | null>((resolve) => run.child.once('close', resolve));
    const report = JSON.parse(await readFile(reportFile, 'utf8').catch(() => 'null')) as { setup: number[]; teardown: number[]; failures: string[] } | null;
    if (code !== 0 || !report || report.failures.length > 0)
      throw new Error(`the fixture bench run failed (exit ${code}):\n${report?.failures.join('\n') ?? ''}\n${run.output()}`);
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
  description: 'inbox fixture overhead: setup (fresh address, no list call) plus teardown (mailbox delete)',
  async run() {
    console.log('Embedded server in its own process, real HTTP on loopback, one test at a time.');
    const r = await runFixtureBench();
    console.log(`\n1. openTestInbox() + close(), the core path the fixture runs (${CORE_WARMUP} warm-up rounds dropped):`);
    console.log(`   setup    ${describe(r.core.setupMs, formatMs(2))}`);
    console.log(`   teardown ${describe(r.core.teardownMs, formatMs(2))}`);
    console.log(`   total    ${describe(r.core.totalMs, formatMs(2))}`);
    console.log(`   goal median <= ${GOAL_MS} ms: ${verdict(percentile(r.core.totalMs, 50) <= GOAL_MS)}`);
    console.log(`\n2. The Playwright \`inbox\` fixture, from Playwright's own fixture steps (whole ms; a worker's first test dropped):`);
    console.log(`   setup    ${describe(r.playwright.setupMs, formatMs(2))}`);
    console.log(`   teardown ${describe(r.playwright.teardownMs, formatMs(2))}`);
    console.log(`   total    ${describe(r.playwright.totalMs, formatMs(2))}`);
    console.log(`   goal median <= ${GOAL_MS} ms: ${verdict(percentile(r.playwright.totalMs, 50) <= GOAL_MS)}`);
  },
};
