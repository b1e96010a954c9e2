// What the SMTP deferral lab costs SMTP ingest (`npm run bench -- smtp-rules`):
// the same mail (nodemailer, a pool of 4 connections, to 1,000 addresses
// without rules) into four servers, each `mailroom serve` in its own
// process, in interleaved rounds whose order rotates:
//   - lab off (`--no-smtp-rules`): the intake as it was before the lab;
//   - lab on, no address has rules: the cost of the log and of asking;
//   - lab on, 1,000 other addresses hold greylist, throttle, defer, slow and
//     disconnect rules: what an address with rules costs the ones without;
//   - lab on, every recipient holds a throttle it never reaches: the cost of
//     an address's own rules on each of its messages.
// BENCH_BASELINE_DIST=/path/to/dist adds a fifth server built from another
// commit (say, main before the lab) with its rules off by default.
//
// BENCH_RULES_STORE=redis runs every server on a Redis store (one
// redis-server for the run, no persistence, a key prefix per server), so the
// lab's rules and attempt log live in Redis: what the shared lab costs
// ingest. The CPU per message is then the server's and Redis's (read the
// same way, around each server's batch).
//
// Besides messages per second it reports what each server process spent on
// the CPU per message (all its threads, from /proc/<pid>/task/*/schedstat):
// on a shared machine the rate moves with everyone else's load, the CPU a
// message costs the server much less.
import { request } from 'undici';
import { AttemptLog } from '../src/server/rules/attempt-log.js';
import { RuleBook } from '../src/server/rules/rule-book.js';
import { parseRuleInput } from '../src/server/rules/rule-input.js';
import { MemoryLabStore } from '../src/server/rules/memory-lab.js';
import { MemoryRuleStore } from '../src/server/rules/rule-store.js';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.js';
import type { BenchSection } from './section.js';
import { sendBatch, type SendMode } from './server.js';
import { freePort, median, processCpuNs, startChild, verdict, waitFor, type Child } from './support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MESSAGES_PER_ROUND = Number(process.env.BENCH_MESSAGES ?? 2000);
const WARMUP_MESSAGES = Number(process.env.BENCH_WARMUP ?? 3000);
const RULED_ADDRESSES = 1000;
const STORE = process.env.BENCH_RULES_STORE ?? 'memory';
if (STORE !== 'memory' && STORE !== 'redis') throw new Error(`BENCH_RULES_STORE must be memory or redis, got ${JSON.stringify(STORE)}`);
const PRODUCTION = { ...process.env, NODE_ENV: 'production' };

interface Target {
  readonly name: string;
  readonly dist: string;
  readonly args: readonly string[];
  /** Rules set before the warm-up. */
  readonly prepare?: (apiURL: string) => Promise<void>;
}

async function setRule(apiURL: string, address: string, rule: unknown): Promise<void> {
  const answer = await request(`${apiURL}/api/v1/mailbox/rules?${new URLSearchParams({ address })}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(rule),
  });
  const text = await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`setting a rule on ${address}: ${answer.statusCode} ${text}`);
}

async function inBatches(count: number, each: (i: number) => Promise<void>): Promise<void> {
  for (let start = 0; start < count; start += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - start) }, (_, k) => each(start + k)));
  }
}

const targets: Target[] = [
  { name: 'lab off', dist: 'dist', args: ['--no-smtp-rules'] },
  { name: 'lab on, no rules', dist: 'dist', args: [] },
  {
    name: 'lab on, 1,000 others ruled',
    dist: 'dist',
    args: [],
    prepare: (apiURL) =>
      inBatches(RULED_ADDRESSES, async (i) => {
        const address = `ruled-${i}@mailroom.test`;
        await setRule(apiURL, address, { kind: 'greylist', min_delay_ms: 60_000 });
        await setRule(apiURL, address, { kind: 'throttle', limit: 2 });
        await setRule(apiURL, address, { kind: 'defer', times: 5 });
        await setRule(apiURL, address, { kind: 'slow', delay_ms: 1000, stage: 'data' });
        await setRule(apiURL, address, { kind: 'disconnect' });
      }),
  },
  {
    name: 'lab on, own throttle',
    dist: 'dist',
    args: [],
    // The bench mails user-0 .. user-999.
    prepare: (apiURL) => inBatches(1000, (i) => setRule(apiURL, `user-${i}@mailroom.test`, { kind: 'throttle', limit: 100_000, per_ms: 60_000 })),
  },
];
if (process.env.BENCH_BASELINE_DIST) targets.unshift({ name: 'baseline dist', dist: process.env.BENCH_BASELINE_DIST, args: [] });

/**
 * The lab's own work on the path of one accepted message to an address
 * without rules, in this process and nothing else: what the intake asks the
 * memory lab (rules/memory-lab.ts) at RCPT and at the end of DATA, the
 * attempt logged, and whether the log is written yet (an accepted mail's
 * Message-ID and Subject are read only when the log is). Beside it, the
 * same work as the intake did it before the lab store boundary (the rule
 * book's lookups and the attempt log, directly), in alternating runs.
 * Microseconds per message, the median of 5 runs of 100,000 each.
 */
function labWorkPerMessage(): { boundary: number; direct: number } {
  const clock = { now: () => Date.now() };
  const lab = new MemoryLabStore({ clock, retention: 3_600_000 });
  const rules = new RuleBook({ store: new MemoryRuleStore(), clock });
  for (let i = 0; i < RULED_ADDRESSES; i++) {
    lab.addRule(`ruled-${i}@mailroom.test`, parseRuleInput({ kind: 'greylist' }));
    rules.add(`ruled-${i}@mailroom.test`, parseRuleInput({ kind: 'greylist' }));
  }
  const log = new AttemptLog({ clock, retention: 3_600_000 });
  const sender = { clientIp: '::ffff:127.0.0.1', from: 'noreply@acme.example' };
  const entry = (i: number, to: string) => ({
    at: clock.now(),
    clientIp: '::ffff:127.0.0.1',
    from: 'noreply@acme.example',
    to,
    stage: 'data' as const,
    code: 250,
    enhancedCode: '2.6.0',
    text: `Stored as 0000000000${i % 10} for ${to}`,
    outcome: 'accepted' as const,
    messageId: `0000000000${i % 10}`,
    beganAt: clock.now(),
  });
  const runs = { boundary: [] as number[], direct: [] as number[] };
  let sink = 0;
  for (let run = 0; run < 10; run++) {
    const throughBoundary = run % 2 === 0;
    const started = performance.now();
    for (let i = 0; i < 100_000; i++) {
      const to = `user-${i % 1000}@mailroom.test`;
      if (throughBoundary) {
        if (lab.step('rcpt', [to], sender) !== undefined) sink++;
        if (lab.step('data', [to], sender) !== undefined) sink++;
        lab.record(entry(i, to));
        if (lab.flushed() !== undefined) sink++;
      } else {
        if (rules.has(to)) sink++;
        if ([to].filter((mailbox) => rules.has(mailbox)).length > 0) sink++;
        log.record(entry(i, to));
      }
    }
    runs[throughBoundary ? 'boundary' : 'direct'].push(((performance.now() - started) * 1000) / 100_000);
  }
  if (sink !== 0) throw new Error('no bench address has rules');
  return { boundary: median(runs.boundary), direct: median(runs.direct) };
}

function sumCpu(...parts: Array<number | undefined>): number | undefined {
  let total = 0;
  for (const part of parts) {
    if (part === undefined) return undefined;
    total += part;
  }
  return total;
}

/** Nanoseconds a process has run on a CPU, all its threads together (Linux, /proc); undefined where it cannot be read. */
const cpuNs = (pid: number | undefined): number | undefined => processCpuNs(pid)?.all;

async function startTarget(target: Target, redis: RedisServer | undefined, n: number): Promise<{ port: number; child: Child }> {
  const [port, http] = [await freePort(), await freePort()];
  const store = redis ? ['--store', redis.url(`bench-rules-${process.pid}-${n}`)] : [];
  const child = startChild(
    process.execPath,
    [`${target.dist}/cli/index.js`, 'serve', '--smtp-port', String(port), '--http-port', String(http), '--max-messages', 'unlimited', ...store, ...target.args],
    PRODUCTION,
  );
  await waitFor(target.name, child, () => /HTTP API listening/.test(child.output()));
  await target.prepare?.(`http://127.0.0.1:${http}`);
  return { port, child };
}

export const smtpRulesBench: BenchSection = {
  name: 'smtp-rules',
  description: 'SMTP ingest with the deferral lab off, on without rules, on with other addresses ruled, and with rules of its own',
  async run() {
    console.log(
      `${ROUNDS} rounds x ${MESSAGES_PER_ROUND} messages per server and send mode after ${WARMUP_MESSAGES} warm-up messages, nodemailer pool of 4, each server in its own process, rounds interleaved in a rotating order, on the ${STORE} store (BENCH_ROUNDS, BENCH_MESSAGES, BENCH_WARMUP, BENCH_BASELINE_DIST, BENCH_RULES_STORE adjust)`,
    );
    const running = new Map<string, { port: number; child: Child }>();
    const rates = new Map<string, number[]>();
    const cpuPerMessage = new Map<string, number[]>();
    const redis = STORE === 'redis' ? await startRedisServer({ priority: 'normal' }) : undefined;
    try {
      for (const [n, target] of targets.entries()) {
        running.set(target.name, await startTarget(target, redis, n));
        await sendBatch(running.get(target.name)!.port, WARMUP_MESSAGES, 1_000_000, 'composed');
      }
      let offset = 0;
      for (const mode of ['precomposed', 'composed'] as const satisfies readonly SendMode[]) {
        for (let round = 0; round < ROUNDS; round++) {
          for (const target of targets.map((_, i) => targets[(i + round) % targets.length]!)) {
            const { port, child } = running.get(target.name)!;
            const before = sumCpu(cpuNs(child.child.pid), ...(redis ? [cpuNs(redis.pid)] : []));
            const rate = await sendBatch(port, MESSAGES_PER_ROUND, offset, mode);
            const after = sumCpu(cpuNs(child.child.pid), ...(redis ? [cpuNs(redis.pid)] : []));
            offset += MESSAGES_PER_ROUND + 4;
            const key = `${mode} ${target.name}`;
            rates.set(key, [...(rates.get(key) ?? []), rate]);
            // The 4 messages that open the pool are counted too.
            const cpu = before === undefined || after === undefined ? undefined : (after - before) / 1000 / (MESSAGES_PER_ROUND + 4);
            if (cpu !== undefined) cpuPerMessage.set(key, [...(cpuPerMessage.get(key) ?? []), cpu]);
            console.log(
              `  ${mode.padEnd(11)} round ${round + 1}: ${target.name.padEnd(27)} ${rate.toFixed(0).padStart(6)} msgs/s${cpu === undefined ? '' : `  ${cpu.toFixed(1).padStart(6)} us CPU/msg`}`,
            );
          }
        }
      }
    } finally {
      await Promise.all([...running.values()].map(({ child }) => child.stop()));
      await redis?.close();
    }
    if (!redis) {
      const { boundary: labWork, direct } = labWorkPerMessage();
      const serverCpu = median(cpuPerMessage.get('precomposed lab off') ?? [Number.NaN]);
      console.log(
        `\n  the lab's own work per accepted message (the rule lookups at RCPT and DATA, the attempt logged), in process: ${labWork.toFixed(2)} us, ${((100 * labWork) / serverCpu).toFixed(1)}% of the ${serverCpu.toFixed(0)} us of CPU the server spends per message with the lab off (target <= 5%: ${verdict(labWork <= 0.05 * serverCpu)}); the same work without the lab store boundary: ${direct.toFixed(2)} us`,
      );
    }
    const cpuOf = redis ? 'server + Redis CPU' : 'server CPU';
    for (const mode of ['precomposed', 'composed'] as const) {
      const off = median(rates.get(`${mode} lab off`)!);
      console.log(
        `\n  median msgs/s, ${mode === 'precomposed' ? 'nodemailer sending a pre-composed source (the server is the bottleneck)' : 'nodemailer composing each message'}:`,
      );
      const offCpu = cpuPerMessage.has(`${mode} lab off`) ? median(cpuPerMessage.get(`${mode} lab off`)!) : undefined;
      for (const target of targets) {
        const rate = median(rates.get(`${mode} ${target.name}`)!);
        const relative = `${((100 * rate) / off).toFixed(1)}% of lab off`;
        const gated = target.name === 'lab on, no rules' || target.name === 'lab on, 1,000 others ruled';
        const goal = gated ? `  (target >= 95%: ${verdict(rate >= 0.95 * off)})` : '';
        const cpus = cpuPerMessage.get(`${mode} ${target.name}`);
        const cpu = cpus && offCpu !== undefined ? median(cpus) : undefined;
        const cpuText =
          cpu === undefined || offCpu === undefined
            ? ''
            : `   ${cpuOf} ${cpu.toFixed(1).padStart(6)} us/msg, ${((100 * cpu) / offCpu).toFixed(1)}% of lab off${gated ? ` (target <= 105%: ${verdict(cpu <= 1.05 * offCpu)})` : ''}`;
        console.log(`    ${target.name.padEnd(27)} ${rate.toFixed(0).padStart(6)}   ${relative}${goal}${cpuText}`);
      }
    }
  },
};
