// `npm run bench -- store` (issue 14): the memory store against the Redis
// store with one and with two replicas, and with one replica without the
// SMTP deferral lab (whose rules and log the Redis store keeps too, so the
// difference is what the shared lab costs), in one run, each server in its own
// process (`mailroom serve`, NODE_ENV=production) and one redis-server
// (Debian's, no persistence) for the Redis runs.
//
//  1. SMTP ingest: BENCH_STORE_MESSAGES (default 100,000) messages over
//     BENCH_STORE_ADDRESSES (default 10,000) addresses, sent by
//     BENCH_STORE_SENDERS (default 8) senders each one message at a time
//     over its own connection, split evenly over the replicas. Every
//     configuration's servers run side by side, and the messages go in
//     BENCH_STORE_ROUNDS (default 5) interleaved rounds, the
//     configurations' order turned by one each round: this machine's speed
//     drifts by tens of percent over minutes (the senders' own CPU per
//     message showed it), so configurations measured one after the other
//     compared the machine's moments more than the stores. A rate is the
//     median of its rounds, and the Redis/memory ratio is the median of the
//     rounds' own ratios. Each message is composed by nodemailer as it is sent
//     (from, to, subject, text: what an app does); BENCH_STORE_SOURCE=
//     precomposed sends a pre-composed source instead (the cheapest sender
//     nodemailer has, so the server is more of the bottleneck). p50/p99 are
//     of each message's SMTP transaction (MAIL FROM to the 250). Beside the rate, what a message cost: the CPU time
//     of the server processes and of redis-server (from /proc, all threads;
//     load on a shared machine moves the rate much more than it moves these)
//     and the commands Redis ran (INFO stats), per message.
//  2. List: one `GET /mailbox?limit=25` per address of the filled store
//     (BENCH_STORE_LISTS, default all of them), one keep-alive connection per
//     replica, alternating replicas.
//  3. Wake-up: a long-poll held on one server is answered when mail is
//     stored, by the same server (memory, Redis with one replica) or by the
//     other replica (Redis with two: the cross-replica wake-up through
//     pub/sub). Timed from the moment the send starts to the long-poll's
//     answer, BENCH_STORE_WAKES (default 200) times; the send's own SMTP
//     transaction is printed beside it.
import { createClient } from '@redis/client';
import nodemailer, { type Transporter } from 'nodemailer';
import { Pool } from 'undici';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.js';
import type { BenchSection } from './section.js';
import {
  answersHealthz,
  describe,
  formatMs,
  freePort,
  median,
  percentile,
  processCpuNs,
  sleep,
  startChild,
  verdict,
  waitFor,
  withMachineCost,
  type Child,
} from './support.js';

const MESSAGES = Number(process.env.BENCH_STORE_MESSAGES ?? 100_000);
const ADDRESSES = Number(process.env.BENCH_STORE_ADDRESSES ?? 10_000);
const LISTS = Number(process.env.BENCH_STORE_LISTS ?? ADDRESSES);
const WAKES = Number(process.env.BENCH_STORE_WAKES ?? 200);
const SENDERS = Number(process.env.BENCH_STORE_SENDERS ?? 8);
const ROUNDS = Number(process.env.BENCH_STORE_ROUNDS ?? 5);
const SOURCE_MODE = process.env.BENCH_STORE_SOURCE ?? 'composed';
if (SOURCE_MODE !== 'composed' && SOURCE_MODE !== 'precomposed')
  throw new Error(`BENCH_STORE_SOURCE must be composed or precomposed, got ${JSON.stringify(SOURCE_MODE)}`);
/** The targets of issue 27: Redis ingest against memory with composed mail, and the list's p99 at 100,000 messages. */
const INGEST_TARGET = 0.8;
const LIST_P99_TARGET_MS = 10;
const LIST_TARGET_MESSAGES = 100_000;
const PRODUCTION = { ...process.env, NODE_ENV: 'production' };

const SOURCE = (to: string, i: number) =>
  Buffer.from(
    [
      'From: Acme <noreply@acme.example>',
      `To: ${to}`,
      `Subject: Your code ${String(i).padStart(6, '0')}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello,\r\n\r\nYour sign-in code is ${100000 + (i % 900000)}. It expires in 10 minutes.\r\nIf you did not ask for it, ignore this message.`,
      '',
    ].join('\r\n'),
  );

interface Replica {
  readonly smtpPort: number;
  readonly apiURL: string;
  readonly child: Child;
}

async function startReplica(store: string, args: readonly string[] = []): Promise<Replica> {
  const [smtpPort, httpPort] = [await freePort(), await freePort()];
  const child = startChild(
    process.execPath,
    ['dist/cli/index.js', 'serve', '--smtp-port', String(smtpPort), '--http-port', String(httpPort), '--max-messages', 'unlimited', '--store', store, ...args],
    PRODUCTION,
  );
  const apiURL = `http://127.0.0.1:${httpPort}`;
  await waitFor('mailroom serve', child, () => answersHealthz(apiURL), 30_000);
  return { smtpPort, apiURL, child };
}

interface Config {
  readonly name: string;
  readonly replicas: readonly Replica[];
  /** The Redis the replicas share; undefined for the memory store. */
  readonly redis?: RedisServer | undefined;
}

/** Nanoseconds a process has run on a CPU, all its threads together (Linux, /proc); undefined where it cannot be read. */
const cpuNs = (pid: number | undefined): number | undefined => processCpuNs(pid)?.all;

/**
 * How many commands Redis has run so far: all of them (INFO stats, the ones
 * the Lua scripts run inside included), the script runs (EVALSHA, EVAL), and
 * the `EXISTS` (INFO commandstats: the lab's look-up at RCPT, and the one the
 * store's script makes inside its run). A server's round trips on the SMTP
 * path are its script runs and the `EXISTS` made outside a script.
 */
async function redisCommands(redis: RedisServer): Promise<{ all: number; scripts: number; exists: number }> {
  const client = createClient({ url: redis.url() });
  await client.connect();
  try {
    const stats = await client.info('stats');
    const commandstats = await client.info('commandstats');
    const calls = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(commandstats)?.[1] ?? 0);
    return { all: Number(/total_commands_processed:(\d+)/.exec(stats)?.[1]), scripts: calls('evalsha') + calls('eval'), exists: calls('exists') };
  } finally {
    await client.close();
  }
}

/** What the ingest cost per message: the server processes' CPU and redis-server's (µs), the senders' (this process), and the commands Redis ran. */
interface IngestCost {
  readonly serverUs: number;
  readonly senderUs: number;
  /** The share of all the machine's cores busy while the mail was sent (/proc/stat), 0 to 1. */
  readonly busy: number;
  readonly redisUs: number | undefined;
  readonly redisCommands: number | undefined;
  readonly redisScripts: number | undefined;
  readonly redisExists: number | undefined;
}

async function measured<T>(config: Config, messages: number, run: () => Promise<T>): Promise<T & { cost: IngestCost }> {
  const pids = config.replicas.map((r) => r.child.child.pid);
  const cpu = () => ({ server: pids.reduce<number>((sum, pid) => sum + (cpuNs(pid) ?? Number.NaN), 0), redis: config.redis && cpuNs(config.redis.pid) });
  const commandsBefore = config.redis && (await redisCommands(config.redis));
  const before = cpu();
  const { result, busy, ownCpuUs } = await withMachineCost(run);
  const after = cpu();
  const commandsAfter = config.redis && (await redisCommands(config.redis));
  const per = (ns: number) => ns / 1000 / messages;
  return {
    ...result,
    cost: {
      serverUs: per(after.server - before.server),
      senderUs: ownCpuUs / messages,
      busy,
      redisUs: after.redis === undefined || before.redis === undefined ? undefined : per(after.redis - before.redis),
      // the first INFO calls are counted in the second's total: they are not the mail's
      redisCommands: commandsBefore === undefined || commandsAfter === undefined ? undefined : (commandsAfter.all - commandsBefore.all - 2) / messages,
      redisScripts: commandsBefore === undefined || commandsAfter === undefined ? undefined : (commandsAfter.scripts - commandsBefore.scripts) / messages,
      redisExists: commandsBefore === undefined || commandsAfter === undefined ? undefined : (commandsAfter.exists - commandsBefore.exists) / messages,
    },
  };
}

interface Result {
  /** The median of the rounds' rates. */
  readonly rate: number;
  readonly rates: readonly number[];
  readonly cost: IngestCost;
  readonly ingest: number[];
  readonly list: number[];
  readonly listRefused: number;
  readonly wake: number[];
  readonly wakeSmtp: number[];
}

function transport(port: number): Transporter {
  return nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity });
}

/** Sends messages number `from` to `to - 1`. */
async function ingest(config: Config, from: number, to: number): Promise<{ rate: number; latencies: number[] }> {
  const transports = Array.from({ length: SENDERS }, (_, i) => transport(config.replicas[i % config.replicas.length]!.smtpPort));
  try {
    // open every connection before the clock starts
    await Promise.all(
      transports.map((t, i) => t.sendMail({ envelope: { from: 'noreply@acme.example', to: `warmup-${i}@mailroom.test` }, raw: SOURCE('w', i) })),
    );
    const latencies: number[] = [];
    let next = from;
    const started = performance.now();
    await Promise.all(
      transports.map(async (t) => {
        for (let i = next++; i < to; i = next++) {
          const to = `user-${i % ADDRESSES}@mailroom.test`;
          const at = performance.now();
          await t.sendMail(
            SOURCE_MODE === 'composed'
              ? {
                  from: 'Acme <noreply@acme.example>',
                  to,
                  subject: `Your code ${String(i).padStart(6, '0')}`,
                  text: `Hello,\n\nYour sign-in code is ${100000 + (i % 900000)}. It expires in 10 minutes.\nIf you did not ask for it, ignore this message.`,
                }
              : { envelope: { from: 'noreply@acme.example', to }, raw: SOURCE(to, i) },
          );
          latencies.push(performance.now() - at);
        }
      }),
    );
    return { rate: (to - from) / ((performance.now() - started) / 1000), latencies };
  } finally {
    for (const t of transports) t.close();
  }
}

async function listAll(config: Config): Promise<{ latencies: number[]; refused: number }> {
  const pools = config.replicas.map((r) => new Pool(r.apiURL, { connections: 1, pipelining: 1 }));
  try {
    const latencies: number[] = [];
    let refused = 0;
    for (let i = 0; i < LISTS; i++) {
      const pool = pools[i % pools.length]!;
      const started = performance.now();
      const response = await pool.request({ method: 'GET', path: `/api/v1/mailbox?address=user-${i}%40mailroom.test&limit=25` });
      await response.body.text();
      if (response.statusCode === 200) latencies.push(performance.now() - started);
      else refused++;
    }
    return { latencies, refused };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

async function wakeUps(config: Config): Promise<{ wake: number[]; smtp: number[] }> {
  const holder = config.replicas[config.replicas.length - 1]!;
  const sender = transport(config.replicas[0]!.smtpPort);
  const pool = new Pool(holder.apiURL, { connections: 1, pipelining: 1 });
  try {
    await sender.sendMail({ envelope: { from: 'noreply@acme.example', to: 'warmup@mailroom.test' }, raw: SOURCE('w', 0) });
    const wake: number[] = [];
    const smtp: number[] = [];
    for (let i = 0; i < WAKES; i++) {
      const to = `wake-${process.pid}-${i}@mailroom.test`;
      const answered = pool.request({ method: 'GET', path: `/api/v1/mailbox/wait?address=${encodeURIComponent(to)}&timeout=10` }).then(async (response) => {
        const body = (await response.body.json()) as { timed_out?: boolean };
        return { at: performance.now(), ok: response.statusCode === 200 && body.timed_out === false };
      });
      // let the hold make its first look before the mail goes (a bench, not a test: a pause is fine here)
      await sleep(30);
      const started = performance.now();
      await sender.sendMail({ envelope: { from: 'noreply@acme.example', to }, raw: SOURCE(to, i) });
      smtp.push(performance.now() - started);
      const { at, ok } = await answered;
      if (ok) wake.push(at - started);
    }
    return { wake, smtp };
  } finally {
    sender.close();
    await pool.close();
  }
}

/** Each configuration's ingest, in interleaved rounds (see the top of this file). */
async function ingestInRounds(configs: readonly Config[]): Promise<Map<string, { rates: number[]; latencies: number[]; costs: IngestCost[] }>> {
  const out = new Map(configs.map((c) => [c.name, { rates: [] as number[], latencies: [] as number[], costs: [] as IngestCost[] }]));
  const perRound = Math.ceil(MESSAGES / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    const from = round * perRound;
    const to = Math.min(MESSAGES, from + perRound);
    const order = configs.map((_, i) => configs[(i + round) % configs.length]!);
    const line: string[] = [];
    for (const config of order) {
      const { rate, latencies, cost } = await measured(config, to - from, () => ingest(config, from, to));
      const mine = out.get(config.name)!;
      mine.rates.push(rate);
      mine.latencies.push(...latencies);
      mine.costs.push(cost);
      line.push(`${config.name} ${rate.toFixed(0)}`);
    }
    console.log(`  round ${round + 1}/${ROUNDS}, messages ${from}-${to - 1}, msgs/s: ${line.join(', ')}`);
  }
  return out;
}

/** The mean of each field over the rounds (they are the same size). */
function meanCost(costs: readonly IngestCost[]): IngestCost {
  const mean = (pick: (c: IngestCost) => number | undefined) => {
    const values = costs.map(pick);
    return values.some((v) => v === undefined) ? undefined : values.reduce<number>((sum, v) => sum + v!, 0) / values.length;
  };
  return {
    serverUs: mean((c) => c.serverUs)!,
    senderUs: mean((c) => c.senderUs)!,
    busy: mean((c) => c.busy)!,
    redisUs: mean((c) => c.redisUs),
    redisCommands: mean((c) => c.redisCommands),
    redisScripts: mean((c) => c.redisScripts),
    redisExists: mean((c) => c.redisExists),
  };
}

export const storeBench: BenchSection = {
  name: 'store',
  description: 'memory store vs Redis store (1 and 2 replicas): SMTP ingest, list latency and wake-ups',
  async run() {
    console.log(
      `${MESSAGES} messages over ${ADDRESSES} addresses per configuration, ${SENDERS} senders one message at a time, ${SOURCE_MODE === 'composed' ? 'nodemailer composing each message' : 'a pre-composed source'}, ${LISTS} list calls, ${WAKES} wake-ups (BENCH_STORE_MESSAGES, BENCH_STORE_ADDRESSES, BENCH_STORE_LISTS, BENCH_STORE_WAKES, BENCH_STORE_SOURCE, BENCH_STORE_SENDERS adjust)`,
    );
    const redis = await startRedisServer({ priority: 'normal' });
    const results = new Map<string, Result>();
    try {
      // Every server runs the SMTP deferral lab (the default); with the Redis
      // store its rules and attempt log are in Redis too, and one more Redis
      // configuration runs without it (`--no-smtp-rules`): what the shared lab costs.
      const configs: Array<{ name: string; stores: string[]; args?: string[] }> = [
        { name: 'memory', stores: ['memory'] },
        { name: 'Redis, 1 replica', stores: [redis.url('bench1')] },
        { name: 'Redis, 1 replica, no lab', stores: [redis.url('bench1-nolab')], args: ['--no-smtp-rules'] },
        { name: 'Redis, 2 replicas', stores: [redis.url('bench2'), redis.url('bench2')] },
      ];
      const running: Config[] = [];
      try {
        for (const { name, stores, args } of configs) {
          const replicas = await Promise.all(stores.map((store) => startReplica(store, args)));
          running.push({ name, replicas, redis: name === 'memory' ? undefined : redis });
        }
        const ingested = await ingestInRounds(running);
        for (const config of running) {
          const { rates, latencies, costs } = ingested.get(config.name)!;
          const list = await listAll(config);
          const { wake, smtp } = await wakeUps(config);
          results.set(config.name, {
            rate: median(rates),
            rates,
            cost: meanCost(costs),
            ingest: latencies,
            list: list.latencies,
            listRefused: list.refused,
            wake,
            wakeSmtp: smtp,
          });
        }
      } finally {
        await Promise.all(running.flatMap((c) => c.replicas.map((r) => r.child.stop())));
      }
    } finally {
      await redis.close();
    }
    const ms = formatMs(2);
    const us = (value: number | undefined) => (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(0));
    console.log(
      '\n  | configuration | ingest msgs/s | ingest p50 / p99 | CPU µs/msg: server / redis-server / senders | cores busy | Redis per msg: script runs / EXISTS / all commands | list p50 / p99 | wake-up p50 / p99 (its SMTP send p50) |',
    );
    console.log('  | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const [name, r] of results) {
      const refused = r.listRefused > 0 ? ` (${r.listRefused} not 200, not timed)` : '';
      const commands =
        r.cost.redisCommands === undefined
          ? '-'
          : `${r.cost.redisScripts?.toFixed(2)} / ${r.cost.redisExists?.toFixed(2)} / ${r.cost.redisCommands.toFixed(1)}`;
      console.log(
        `  | ${name} | ${r.rate.toFixed(0)} | ${ms(percentile(r.ingest, 50))} / ${ms(percentile(r.ingest, 99))} | ${us(r.cost.serverUs)} / ${us(r.cost.redisUs)} / ${us(r.cost.senderUs)} | ${Number.isNaN(r.cost.busy) ? '-' : `${(100 * r.cost.busy).toFixed(0)}%`} | ${commands} | ${ms(percentile(r.list, 50))} / ${ms(percentile(r.list, 99))}${refused} | ${ms(percentile(r.wake, 50))} / ${ms(percentile(r.wake, 99))} (${ms(percentile(r.wakeSmtp, 50))}) |`,
      );
    }
    const memory = results.get('memory')!;
    const one = results.get('Redis, 1 replica')!;
    const two = results.get('Redis, 2 replicas')!;
    const noLab = results.get('Redis, 1 replica, no lab')!;
    // Round by round: each round's two rates were measured minutes apart at most.
    const roundRatio = (a: Result, b: Result) => median(a.rates.map((rate, i) => rate / b.rates[i]!));
    const ratio = roundRatio(one, memory);
    const cpuRatio = memory.cost.serverUs / (one.cost.serverUs + (one.cost.redisUs ?? 0));
    console.log(
      `\n  Redis ingest with 1 replica (the lab on) is ${ratio.toFixed(2)}x the memory store's with ${SOURCE_MODE} mail and ${SENDERS} senders, the median of ${ROUNDS} rounds' ratios (${one.rates.map((rate, i) => (rate / memory.rates[i]!).toFixed(2)).join(', ')}; medians of the rates: ${(one.rate / memory.rate).toFixed(2)}x) (target >= ${INGEST_TARGET}x with composed mail: ${SOURCE_MODE === 'composed' ? verdict(ratio >= INGEST_TARGET) : 'not measured here, BENCH_STORE_SOURCE=composed'}); by CPU per message (the memory server's against the Redis server's and redis-server's together) ${cpuRatio.toFixed(2)}x`,
    );
    // Each sender has one mail in flight: where the machine has cores to spare the rate follows the SMTP transaction's time, which
    // the Redis store's round trips lengthen; with more mail in flight the Redis server batches and catches up (docs/redis.md).
    console.log(
      `    with ${SENDERS} mails in flight the machine was ${(100 * memory.cost.busy).toFixed(0)}% (memory) and ${(100 * one.cost.busy).toFixed(0)}% (Redis) busy; where it is not full the rates follow the SMTP transaction's time (p50 ${ms(percentile(memory.ingest, 50))} and ${ms(percentile(one.ingest, 50))}), and more mail in flight (BENCH_STORE_SENDERS) measures nearer each store's capacity`,
    );
    console.log(
      `  the SMTP deferral lab in Redis (its rule lookups, the attempt logged): ingest with it is ${roundRatio(one, noLab).toFixed(2)}x the rate without it (round by round) (--no-smtp-rules), SMTP transaction p50 ${ms(percentile(one.ingest, 50))} against ${ms(percentile(noLab.ingest, 50))}, ${us(one.cost.serverUs)} against ${us(noLab.cost.serverUs)} µs of the server's CPU per message`,
    );
    console.log(
      `  Redis ingest with 2 replicas is ${roundRatio(two, one).toFixed(2)}x 1 replica's, round by round (target > 1x: ${verdict(roundRatio(two, one) > 1)})`,
    );
    const listP99 = Math.max(percentile(one.list, 99), percentile(two.list, 99));
    const atSize =
      MESSAGES >= LIST_TARGET_MESSAGES
        ? verdict(listP99 <= LIST_P99_TARGET_MS)
        : `not judged: the target is at ${LIST_TARGET_MESSAGES} messages, this run stored ${MESSAGES}`;
    console.log(
      `  Redis list p99 at ${MESSAGES} messages: 1 replica ${ms(percentile(one.list, 99))}, 2 replicas ${ms(percentile(two.list, 99))} (target <= ${LIST_P99_TARGET_MS} ms at ${LIST_TARGET_MESSAGES}: ${atSize})`,
    );
    console.log(
      `  cross-replica wake-up p50 ${ms(percentile(two.wake, 50))} (target <= 20 ms: ${verdict(percentile(two.wake, 50) <= 20)}); ${describe(two.wake, ms, [50, 99])}`,
    );
  },
};
