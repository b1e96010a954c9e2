// The suite-level benchmark (issue 10): the demo's signup flow as a real
// Playwright suite, 100 tests in real Chromium with 4 workers, run four ways
// in one command, each against its own fresh mailroom server and demo app:
//
//  (a) mailroom as shipped: the `inbox` fixture and `inbox.expectMail`;
//  (b) the same with the server-side wait off (MAILROOM_SERVER_WAIT=0): polling;
//  (c) the loop many teams write by hand over the same HTTP API
//      (bench/suite/hand-written-loop.ts): sleep 1 s, list, take the newest
//      match, fetch it;
//  (d) the floor: the link read from the demo app's own outbox, no mailbox
//      at all, so what remains is the browser work.
//
// For each: the run's wall time and each test's "click to mail in hand"
// (from the click on "Sign up", which makes the app send the mail, to the
// test holding the link), measured in the tests themselves. Targets: (a)
// within 10% of (d), and (a) at most 0.6x the wall time of (c).
// MAILROOM_BENCH_SUITE_TESTS=20 runs fewer tests per way.
// MAILROOM_BENCH_SUITE_ROUNDS=3 runs every way three times, in a rotated
// order each round, and reports the median wall time and the pooled per-test
// times: on 2 cores one run's wall time moves by 10-30% with the machine's load.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchSection } from './section.js';
import type { SuiteRunReport } from './suite/timings-reporter.js';
import { ENV, WAY_LABELS, WAYS, roundsFromEnv, testsFromEnv, type Way } from './suite/ways.js';
import { answersHealthz, formatDuration, freePort, percentile, ROOT, startChild, startServerProcess, verdict, waitFor } from './support.js';

const WORKERS = 4;
/** A first, uncounted run, so that no way pays for cold caches (Playwright's transform cache, the browser's files). */
const WARM_UP_TESTS = 8;
const FLOOR_MARGIN = 0.1;
const HAND_LOOP_RATIO = 0.6;

export interface WayResult {
  /** Playwright's own duration of the run. */
  readonly wallMs: number;
  /** From spawning `playwright test` to its exit: adds loading the config and the spec. */
  readonly processMs: number;
  readonly clickToMailMs: readonly number[];
  readonly answeredToMailMs: readonly number[];
}

interface DemoAppProcess {
  readonly url: string;
  readonly stop: () => Promise<void>;
}

/** fixtures/demo-app/main.ts in its own process, as the e2e suite runs it, with the outbox on in every way so the app's work is the same. */
async function startDemoAppProcess(smtpPort: number): Promise<DemoAppProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = startChild(process.execPath, ['--import', 'tsx', 'fixtures/demo-app/main.ts'], {
    ...process.env,
    DEMO_PORT: String(port),
    MAILROOM_SMTP_PORT: String(smtpPort),
    DEMO_OUTBOX: '1',
    DEMO_SEND_DELAY_MS: '',
  });
  try {
    await waitFor('the demo app', child, () => answersHealthz(url), 30_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { url, stop: () => child.stop() };
}

/** One `playwright test` run of `tests` tests, taking the link `way`'s way. */
async function runPlaywright(way: Way, tests: number, apiURL: string, appURL: string): Promise<WayResult> {
  const dir = await mkdtemp(join(tmpdir(), 'mailroom-bench-suite-'));
  const reportFile = join(dir, 'report.json');
  try {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // The fixture would read these; the server here serves the default domain without a token.
    delete env.MAILROOM_DOMAIN;
    delete env.MAILROOM_TOKEN;
    Object.assign(env, {
      MAILROOM_API_URL: apiURL,
      // Set in every way, so a value in the caller's shell cannot turn (a) into (b).
      MAILROOM_SERVER_WAIT: way === 'polling' ? '0' : '1',
      [ENV.way]: way,
      [ENV.tests]: String(tests),
      [ENV.appURL]: appURL,
      [ENV.report]: reportFile,
      [ENV.output]: join(dir, 'test-results'),
    });
    const cli = createRequire(import.meta.url).resolve('@playwright/test/cli');
    const started = performance.now();
    const run = startChild(process.execPath, [cli, 'test', '--config', join(ROOT, 'bench', 'suite', 'playwright.config.ts')], env);
    const code = await new Promise<number | null>((resolve) => run.child.once('close', resolve));
    const processMs = performance.now() - started;
    const report = JSON.parse(await readFile(reportFile, 'utf8').catch(() => 'null')) as SuiteRunReport | null;
    if (code !== 0 || !report || report.failures.length > 0 || report.timings.length !== tests) {
      const failures = report?.failures.join('\n') ?? 'no report';
      throw new Error(`the suite run for ${way} failed (exit ${code}, ${report?.timings.length ?? 0} of ${tests} tests timed):\n${failures}\n${run.output()}`);
    }
    return {
      wallMs: report.wallMs,
      processMs,
      clickToMailMs: report.timings.map((t) => t.clickToMailMs),
      answeredToMailMs: report.timings.map((t) => t.answeredToMailMs),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A fresh mailroom server and demo app for one run, stopped after it. */
async function runWay(way: Way, tests: number): Promise<WayResult> {
  const server = await startServerProcess();
  let app: DemoAppProcess | undefined;
  try {
    app = await startDemoAppProcess(server.smtpPort);
    return await runPlaywright(way, tests, server.apiURL, app.url);
  } finally {
    await app?.stop();
    await server.stop();
  }
}

export async function runSuiteBench(tests: number, rounds = 1, log: (line: string) => void = () => {}): Promise<Record<Way, WayResult>> {
  log(`warm-up: ${WARM_UP_TESTS} tests of (d), not counted`);
  await runWay('outbox', WARM_UP_TESTS);
  const runs = Object.fromEntries(WAYS.map((way) => [way, [] as WayResult[]])) as Record<Way, WayResult[]>;
  for (let round = 0; round < rounds; round++) {
    // Rotated, so no way always runs first or last in a round.
    const order = WAYS.map((_, i) => WAYS[(i + round) % WAYS.length]!);
    for (const way of order) {
      log(`${rounds > 1 ? `round ${round + 1}/${rounds}: ` : ''}${WAY_LABELS[way]}: ${tests} tests…`);
      runs[way].push(await runWay(way, tests));
    }
  }
  return Object.fromEntries(WAYS.map((way) => [way, combine(runs[way])])) as Record<Way, WayResult>;
}

/** One way's rounds as one result: the median wall and process times, every test's timings. */
function combine(results: readonly WayResult[]): WayResult {
  return {
    wallMs: percentile(
      results.map((r) => r.wallMs),
      50,
    ),
    processMs: percentile(
      results.map((r) => r.processMs),
      50,
    ),
    clickToMailMs: results.flatMap((r) => r.clickToMailMs),
    answeredToMailMs: results.flatMap((r) => r.answeredToMailMs),
  };
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const ms = (value: number): string => formatDuration(value);

export const suiteBench: BenchSection = {
  name: 'suite',
  description: "100 Playwright tests of the demo's signup flow in Chromium, 4 workers, four ways (takes a few minutes)",
  async run() {
    const tests = testsFromEnv();
    const rounds = roundsFromEnv();
    console.log(
      `${tests} tests per way (MAILROOM_BENCH_SUITE_TESTS), ${rounds} round(s) (MAILROOM_BENCH_SUITE_ROUNDS), ${WORKERS} workers, real Chromium; each run against its own fresh mailroom server and demo app on free ports.`,
    );
    const r = await runSuiteBench(tests, rounds, (line) => console.log(`  ${line}`));
    console.log(`\n"click to mail": from the click on "Sign up" to the link in the test's hands. The app sends the mail before it answers,`);
    console.log(`so it includes the page's answer ("Check your inbox" visible), the same in every way; "answer to mail" is the part after it.`);
    console.log(`wall: Playwright's own duration of the run (the median over the rounds); process: from spawning \`playwright test\` to its exit.\n`);
    console.log('| way | wall | process | click to mail p50 | p90 | answer to mail p50 | p90 |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const way of WAYS) {
      const x = r[way];
      const cells = [
        WAY_LABELS[way],
        seconds(x.wallMs),
        seconds(x.processMs),
        ms(percentile(x.clickToMailMs, 50)),
        ms(percentile(x.clickToMailMs, 90)),
        ms(percentile(x.answeredToMailMs, 50)),
        ms(percentile(x.answeredToMailMs, 90)),
      ];
      console.log(`| ${cells.join(' | ')} |`);
    }
    const a = r.mailroom;
    const d = r.outbox;
    const c = r['hand-loop'];
    const overFloor = a.wallMs / d.wallMs - 1;
    const toHandLoop = a.wallMs / c.wallMs;
    console.log('');
    console.log(
      `(a) vs the floor (d): wall ${seconds(a.wallMs)} vs ${seconds(d.wallMs)}, ${(overFloor * 100).toFixed(1)}% above it; target within ${FLOOR_MARGIN * 100}%: ${verdict(overFloor <= FLOOR_MARGIN)}`,
    );
    const perTest = percentile(a.clickToMailMs, 50) - percentile(d.clickToMailMs, 50);
    console.log(
      `   per test, click to mail p50 ${ms(percentile(a.clickToMailMs, 50))} vs ${ms(percentile(d.clickToMailMs, 50))} (${perTest < 0 ? '-' : '+'}${ms(Math.abs(perTest))})`,
    );
    console.log(
      `(a)/(c) wall time: ${seconds(a.wallMs)} / ${seconds(c.wallMs)} = ${toHandLoop.toFixed(2)}; target at most ${HAND_LOOP_RATIO}: ${verdict(toHandLoop <= HAND_LOOP_RATIO)}`,
    );
    // The floor bounds this ratio too: no way of taking the mail makes the browser work cheaper.
    console.log(`   the floor's own ratio (d)/(c), the best any wait could reach in this run: ${(d.wallMs / c.wallMs).toFixed(2)}`);
  },
};
