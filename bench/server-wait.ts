// The server-side wait's benchmark (issue 6), against the embedded server in
// its own process (`mailroom serve`, real SMTP and HTTP), through the public
// API exactly as a test would use it, server-wait and polling in the same
// run against the same server (polling is `serverWait: false`):
//
//  1. Detection latency for mail arriving mid-wait: from the SMTP 250 (the
//     server answers it once the mail is visible) to `expectMail` resolving,
//     the message fetched. Goal with the server wait: p50 <= 10 ms, p99 <= 50 ms.
//     The two modes' samples are interleaved in the same batches, so they
//     see the same load.
//  2. A 200-test suite, simulated: 4 workers run 50 tests each, one after the
//     other; a test creates its inbox, acts, and its mail is sent 0.2-2 s
//     after the action (the same delays, from one seed, in both modes), then
//     waits for it. Goal: wall time at least 40% lower with the server wait.
//     Both modes run in every round, in turn, the order swapped each round
//     (BENCH_SERVER_WAIT_ROUNDS, default 3), so neither always runs first on
//     a warm or a loaded machine; the drop is the median of the rounds' own.
import { createInbox } from '../src/index.js';
import type { BenchSection } from './section.js';
import {
  describe,
  formatDuration,
  mailSender,
  median,
  percentile,
  percentileOrMax,
  sleep,
  startServerProcess,
  verdict,
  type ServerProcess,
} from './support.js';

const MID_WAIT_SAMPLES = Number(process.env.BENCH_SERVER_WAIT_SAMPLES ?? 100);
const SUITE_TESTS = Number(process.env.BENCH_SUITE_TESTS ?? 200);
const SUITE_WORKERS = 4;
const SUITE_ROUNDS = Number(process.env.BENCH_SERVER_WAIT_ROUNDS ?? 3);
const BATCH = 8;

type Mode = 'server-wait' | 'polling';
const MODES: readonly Mode[] = ['server-wait', 'polling'];

interface SuiteRun {
  readonly wallMs: number;
  readonly perTestMs: number[];
  readonly rateLimited: number;
  /** What the server saw, summed over the run's addresses. */
  readonly listCalls: number;
  readonly waits: number;
}

interface Results {
  readonly midWait: Record<Mode, { latenciesMs: number[]; rateLimited: number; listCalls: number; waits: number }>;
  /** One run per mode per round, in the order they ran. */
  readonly suite: ReadonlyArray<Record<Mode, SuiteRun> & { readonly order: readonly Mode[] }>;
}

type Send = (to: string, subject: string) => Promise<number>;

export async function runServerWaitBench(): Promise<Results> {
  const server = await startServerProcess({ args: ['--enable-faults'] });
  const sender = mailSender(server.smtpPort);
  const send: Send = sender.send;
  try {
    // Warm up both paths (JIT, connection pools) before measuring.
    await Promise.all(MODES.map((mode) => midWaitSample(server, send, mode, 200)));
    const midWait = await midWaitLatency(server, send);
    const suite: Array<Record<Mode, SuiteRun> & { order: readonly Mode[] }> = [];
    for (let round = 0; round < SUITE_ROUNDS; round++) {
      const order = round % 2 === 0 ? (['polling', 'server-wait'] as const) : (['server-wait', 'polling'] as const);
      const runs: Partial<Record<Mode, SuiteRun>> = {};
      for (const mode of order) {
        runs[mode] = await simulatedSuite(server, send, mode);
        console.log(`   round ${round + 1}: ${mode.padEnd(11)} wall ${formatDuration(runs[mode].wallMs)}`);
      }
      suite.push({ ...(runs as Record<Mode, SuiteRun>), order });
    }
    return { midWait, suite };
  } finally {
    sender.close();
    await server.stop();
  }
}

async function midWaitSample(server: ServerProcess, send: Send, mode: Mode, landsAfterMs: number) {
  const inbox = await createInbox({ apiURL: server.apiURL, prefix: `bench-mid-${mode}`, serverWait: mode === 'server-wait' });
  await sleep(1050); // a test that acts for a second before it waits
  const waiting = inbox.expectMail({ subject: 'Arrived' }, { timeout: 30_000 }).then(() => performance.now());
  await sleep(landsAfterMs);
  const visibleAt = await send(inbox.address, 'Arrived');
  const latencyMs = (await waiting) - visibleAt;
  const stats = await server.stats(inbox.address);
  return { latencyMs, stats };
}

async function midWaitLatency(server: ServerProcess, send: Send): Promise<Results['midWait']> {
  const results: Results['midWait'] = {
    'server-wait': { latenciesMs: [], rateLimited: 0, listCalls: 0, waits: 0 },
    polling: { latenciesMs: [], rateLimited: 0, listCalls: 0, waits: 0 },
  };
  for (let done = 0; done < MID_WAIT_SAMPLES; done += BATCH / 2) {
    const batch = Array.from({ length: BATCH }, async (_, i) => {
      const mode = MODES[i % 2]!;
      // Mail lands at a uniformly random moment 0.5-4.5 s into the wait.
      const { latencyMs, stats } = await midWaitSample(server, send, mode, 500 + Math.random() * 4000);
      const r = results[mode];
      r.latenciesMs.push(latencyMs);
      r.rateLimited += stats.rateLimited;
      r.listCalls += stats.list;
      r.waits += stats.wait ?? 0;
    });
    await Promise.all(batch);
  }
  return results;
}

/** 0.2-2 s, from a seeded generator: the same delays in both modes. */
function delays(count: number, seed = 42): number[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: count }, () => 200 + random() * 1800);
}

async function simulatedSuite(server: ServerProcess, send: Send, mode: Mode): Promise<SuiteRun> {
  const sendDelays = delays(SUITE_TESTS);
  const perTestMs: number[] = [];
  const addresses: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let test = next++; test < SUITE_TESTS; test = next++) {
      const testStarted = performance.now();
      const inbox = await createInbox({ apiURL: server.apiURL, prefix: `bench-suite-${mode}`, serverWait: mode === 'server-wait' });
      addresses.push(inbox.address);
      // The action: the app under test will send its mail a little later.
      const sent = sleep(sendDelays[test]!).then(() => send(inbox.address, `Your code ${test}`));
      const mail = await inbox.expectMail({ subject: 'Your code' }, { timeout: 30_000 });
      if (mail.subject !== `Your code ${test}`) throw new Error(`test ${test} got ${JSON.stringify(mail.subject)}`);
      await sent;
      perTestMs.push(performance.now() - testStarted);
    }
  };
  await Promise.all(Array.from({ length: SUITE_WORKERS }, worker));
  const wallMs = performance.now() - started;
  let rateLimited = 0;
  let listCalls = 0;
  let waits = 0;
  for (const address of addresses) {
    const stats = await server.stats(address);
    rateLimited += stats.rateLimited;
    listCalls += stats.list;
    waits += stats.wait ?? 0;
  }
  return { wallMs, perTestMs, rateLimited, listCalls, waits };
}

export const serverWaitBench: BenchSection = {
  name: 'server-wait',
  description: 'server-side wait vs polling: detection latency mid-wait, a simulated 200-test suite',
  async run() {
    console.log(
      `Embedded server in its own process; both modes in the same run, against the same server (BENCH_SERVER_WAIT_SAMPLES=${MID_WAIT_SAMPLES}, BENCH_SUITE_TESTS=${SUITE_TESTS}, BENCH_SERVER_WAIT_ROUNDS=${SUITE_ROUNDS}).`,
    );
    const r = await runServerWaitBench();

    console.log(`\n1. Mail arriving mid-wait (0.5-4.5 s in), from SMTP 250 to expectMail resolving (message fetched), both modes in the same batches:`);
    for (const mode of MODES) {
      const m = r.midWait[mode];
      console.log(`   ${mode.padEnd(11)} ${describe(m.latenciesMs, formatDuration)}; requests: ${m.listCalls} list, ${m.waits} wait; 429s: ${m.rateLimited}`);
    }
    const s = r.midWait['server-wait'].latenciesMs;
    const tail = percentileOrMax(s, 99);
    console.log(
      `   goal with the server wait p50 <= 10 ms: ${verdict(percentile(s, 50) <= 10)}; p99 <= 50 ms, judged on the ${tail.name}: ${verdict(tail.value <= 50)}`,
    );

    console.log(
      `\n2. ${SUITE_TESTS} tests, ${SUITE_WORKERS} workers, each test's mail sent 0.2-2 s after its action (same delays in both modes), ${r.suite.length} rounds, the order swapped each round:`,
    );
    const drops: number[] = [];
    r.suite.forEach((round, i) => {
      const drop = 1 - round['server-wait'].wallMs / round.polling.wallMs;
      drops.push(drop);
      console.log(`   round ${i + 1} (${round.order.join(' then ')}): ${(drop * 100).toFixed(1)}% lower with the server wait`);
    });
    for (const mode of ['polling', 'server-wait'] as const) {
      const runs = r.suite.map((round) => round[mode]);
      const perTest = runs.flatMap((x) => x.perTestMs);
      const sum = (pick: (x: SuiteRun) => number) => runs.reduce((a, x) => a + pick(x), 0);
      console.log(
        `   ${mode.padEnd(11)} wall median ${formatDuration(median(runs.map((x) => x.wallMs)))} (${runs.map((x) => formatDuration(x.wallMs)).join(', ')}); per test p50 ${formatDuration(percentile(perTest, 50))}, p90 ${formatDuration(percentile(perTest, 90))}; requests per test: ${(sum((x) => x.listCalls) / perTest.length).toFixed(2)} list, ${(sum((x) => x.waits) / perTest.length).toFixed(2)} wait; 429s: ${sum((x) => x.rateLimited)}`,
      );
    }
    const drop = median(drops);
    const meanDelay = delays(SUITE_TESTS).reduce((a, b) => a + b, 0) / SUITE_TESTS;
    console.log(`   wall time ${(drop * 100).toFixed(1)}% lower with the server wait (median of the rounds); goal >= 40%: ${verdict(drop >= 0.4)}`);
    const floorMs = (meanDelay * SUITE_TESTS) / SUITE_WORKERS;
    const serverWaitWall = median(r.suite.map((round) => round['server-wait'].wallMs));
    const pollingWall = median(r.suite.map((round) => round.polling.wallMs));
    console.log(
      `   the floor: no test ends before its mail is sent, on average ${formatDuration(meanDelay)} after its action, so no wait can make the suite shorter than ${formatDuration(floorMs)};`,
    );
    console.log(
      `   the server wait's median is ${formatDuration(serverWaitWall - floorMs)} above it, and the best any wait could do against the polling median is ${((1 - floorMs / pollingWall) * 100).toFixed(1)}% lower`,
    );
  },
};
