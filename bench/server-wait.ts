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
import { createInbox } from '../src/index.js';
import type { BenchSection } from './run.js';
import { describe, formatDuration, mailSender, percentile, sleep, startServerProcess, verdict, type ServerProcess } from './support.js';

const MID_WAIT_SAMPLES = Number(process.env.BENCH_SERVER_WAIT_SAMPLES ?? 100);
const SUITE_TESTS = Number(process.env.BENCH_SUITE_TESTS ?? 200);
const SUITE_WORKERS = 4;
const BATCH = 8;

type Mode = 'server-wait' | 'polling';
const MODES: readonly Mode[] = ['server-wait', 'polling'];

interface Results {
  readonly midWait: Record<Mode, { latenciesMs: number[]; rateLimited: number; listCalls: number; waits: number }>;
  readonly suite: Record<Mode, { wallMs: number; perTestMs: number[]; rateLimited: number }>;
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
    const suite = { polling: await simulatedSuite(server, send, 'polling'), 'server-wait': await simulatedSuite(server, send, 'server-wait') };
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

async function simulatedSuite(server: ServerProcess, send: Send, mode: Mode): Promise<Results['suite'][Mode]> {
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
  for (const address of addresses) rateLimited += (await server.stats(address)).rateLimited;
  return { wallMs, perTestMs, rateLimited };
}

export const serverWaitBench: BenchSection = {
  name: 'server-wait',
  description: 'server-side wait vs polling: detection latency mid-wait, a simulated 200-test suite',
  async run() {
    console.log('Embedded server in its own process; both modes in the same run, against the same server.');
    const r = await runServerWaitBench();

    console.log(`\n1. Mail arriving mid-wait (0.5-4.5 s in), from SMTP 250 to expectMail resolving (message fetched):`);
    for (const mode of MODES) {
      const m = r.midWait[mode];
      console.log(`   ${mode.padEnd(11)} ${describe(m.latenciesMs, formatDuration)}; requests: ${m.listCalls} list, ${m.waits} wait; 429s: ${m.rateLimited}`);
    }
    const s = r.midWait['server-wait'].latenciesMs;
    console.log(`   goal with the server wait p50 <= 10 ms: ${verdict(percentile(s, 50) <= 10)}; p99 <= 50 ms: ${verdict(percentile(s, 99) <= 50)}`);

    console.log(`\n2. ${SUITE_TESTS} tests, ${SUITE_WORKERS} workers, each test's mail sent 0.2-2 s after its action (same delays in both modes):`);
    for (const mode of ['polling', 'server-wait'] as const) {
      const x = r.suite[mode];
      console.log(
        `   ${mode.padEnd(11)} wall ${formatDuration(x.wallMs)}; per test p50 ${formatDuration(percentile(x.perTestMs, 50))}, p90 ${formatDuration(percentile(x.perTestMs, 90))}; 429s: ${x.rateLimited}`,
      );
    }
    const drop = 1 - r.suite['server-wait'].wallMs / r.suite.polling.wallMs;
    const meanDelay = delays(SUITE_TESTS).reduce((a, b) => a + b, 0) / SUITE_TESTS;
    console.log(`   wall time ${(drop * 100).toFixed(1)}% lower with the server wait; goal >= 40%: ${verdict(drop >= 0.4)}`);
    const floorMs = (meanDelay * SUITE_TESTS) / SUITE_WORKERS;
    console.log(
      `   the floor: no test ends before its mail is sent, on average ${formatDuration(meanDelay)} after its action, so no wait can make the suite shorter than ${formatDuration(floorMs)};`,
    );
    console.log(
      `   the server wait is ${formatDuration(r.suite['server-wait'].wallMs - floorMs)} above it, and the best any wait could do against this polling run is ${((1 - floorMs / r.suite.polling.wallMs) * 100).toFixed(1)}% lower`,
    );
  },
};
