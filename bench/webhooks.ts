// What webhooks cost and how fast they are (`npm run bench -- webhooks`):
//
// 1. Fan-out latency: one mail at a time over SMTP into `mailroom serve`
//    (its own process) with one webhook registered, from the SMTP `250`
//    to the first byte of the POST at a receiver in this process (both
//    timestamps on this process's clock), over 1,000 mails. Target p50
//    at most 10 ms.
// 2. SMTP ingest with one webhook registered against none, in the same
//    run: two servers, each `mailroom serve` in its own process, the same
//    mail (nodemailer, a pool of 4 connections, to 1,000 addresses) in
//    interleaved rounds whose order alternates; the webhook posts every
//    message.received to a receiver in a third process. After each round
//    the bench waits for the webhook's queue to drain (so no round pays
//    for the one before) and prints how long that took. Target: with one
//    webhook at least 0.9x the rate with none (issue 27). Each round also
//    reads each server's CPU per message from /proc: on a shared machine
//    the rates move with the load, the CPU a message costs much less. And
//    it reads where the machine's CPU went while the round was sent: how
//    busy all its cores were (/proc/stat), the sender's and the receiver's
//    CPU per message. With no webhook the sender is the bottleneck; with
//    one, once every core is busy, the rate is what the cores allow. The
//    rate counts the intake while the webhook's queue may grow; "delivered"
//    counts a round's mail over its sending and its drain together, the
//    rate the webhooks keep up with.
//
// BENCH_WEBHOOKS_STORE=redis runs every server on a Redis store (one
// redis-server started here, no persistence, a key prefix per server): the
// webhooks' queue, leases and log in Redis (issue 14), against the same
// Redis store with no webhook. The in-process measure of the fan-out's own
// work is the memory store's and is skipped there.
import { availableParallelism } from 'node:os';
import { createServer, type IncomingMessage } from 'node:http';
import nodemailer from 'nodemailer';
import { request } from 'undici';
import { AttemptFeed } from '../src/server/base/smtp-attempts.js';
import { startRedisServer, type RedisServer } from '../test/support/redis-server.js';
import { MessageStore } from '../src/server/store/message-store.js';
import { createWebhookService } from '../src/server/webhooks/webhook-service.js';
import type { BenchSection } from './section.js';
import { sendBatch, type SendMode } from './server.js';
import {
  acceptedAttempt,
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

const LATENCY_MAILS = Number(process.env.BENCH_WEBHOOK_MAILS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MESSAGES_PER_ROUND = Number(process.env.BENCH_MESSAGES ?? 2000);
const WARMUP_MESSAGES = Number(process.env.BENCH_WARMUP ?? 2000);
const PRODUCTION = { ...process.env, NODE_ENV: 'production' };
const STORE = process.env.BENCH_WEBHOOKS_STORE ?? 'memory';
if (STORE !== 'memory' && STORE !== 'redis') throw new Error(`BENCH_WEBHOOKS_STORE must be memory or redis, got ${JSON.stringify(STORE)}`);
let redis: RedisServer | undefined;
let prefixes = 0;
/** `--store` for the next server: none on the memory store, a Redis prefix of its own on Redis. */
const storeArgs = (): string[] => (redis ? ['--store', redis.url(`bench-webhooks-${process.pid}-${++prefixes}`)] : []);

async function serve(name: string, args: readonly string[]): Promise<{ port: number; apiURL: string; child: Child }> {
  const [port, http] = [await freePort(), await freePort()];
  const child = startChild(
    process.execPath,
    ['dist/cli/index.js', 'serve', '--smtp-port', String(port), '--http-port', String(http), '--max-messages', 'unlimited', ...storeArgs(), ...args],
    PRODUCTION,
  );
  await waitFor(name, child, () => /HTTP API listening/.test(child.output()));
  return { port, apiURL: `http://127.0.0.1:${http}`, child };
}

async function fanOutLatency(): Promise<number[]> {
  // The receiver notes the moment a request's head arrives. One mail is in flight at a time, so the next POST is that mail's.
  let next: ((at: number) => void) | undefined;
  const receiver = createServer((req: IncomingMessage, res) => {
    const at = performance.now();
    req.resume();
    req.on('end', () => res.writeHead(204).end());
    next?.(at);
    next = undefined;
  });
  const receiverPort = await freePort();
  await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', () => resolve()));
  const server = await serve('mailroom with one webhook', ['--webhook', `http://127.0.0.1:${receiverPort}/hook`, '--webhook-secret', 'bench']);
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.port, secure: false, ignoreTLS: true, pool: true, maxConnections: 1 });
  const latencies: number[] = [];
  try {
    for (let i = -50; i < LATENCY_MAILS; i++) {
      const first = new Promise<number>((resolve) => (next = resolve));
      const answered = await transport
        .sendMail({ from: 'Acme <noreply@acme.example>', to: `fan-out-${i}@mailroom.test`, subject: `Ticket ${i}`, text: 'Hello, a ticket for you.' })
        .then(() => performance.now());
      const at = await first;
      // The first 50 warm the server, the pool and the JIT.
      if (i >= 0) latencies.push(at - answered);
    }
  } finally {
    transport.close();
    await server.child.stop();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
  return latencies;
}

/**
 * The fan-out's own work on the SMTP path of one accepted message, in this
 * process and nothing else: the subscriber lookup, the event made (an id and
 * a reference to the stored message) and queued. Its delivery is never run
 * here (the dispatcher's timers are held), so what is timed is exactly what
 * the intake pays before it writes its 250. Microseconds per message, the
 * median of 5 runs of 5,000 (each with a fresh webhook: its log holds
 * 10,000), with one webhook and with none.
 */
async function fanOutWorkPerMessage(): Promise<{ none: number; one: number }> {
  const clock = { now: () => Date.now() };
  const once = async (withWebhook: boolean): Promise<number> => {
    const messages = new MessageStore({ clock, retention: 3_600_000, maxMessages: Infinity });
    const attempts = new AttemptFeed(() => {});
    const held: (() => void)[] = [];
    const service = createWebhookService({
      attempts,
      rawUrl: () => '',
      readSource: () => Promise.resolve(undefined),
      mailboxKey: (address) => address,
      now: clock.now,
      random: Math.random,
      logger: { info() {}, warn() {}, error() {} },
      timers: { now: clock.now, after: () => () => {}, soon: (run) => void held.push(run) },
      // Nothing is sent (the timers are held), so no delivery thread is started either.
      sender: { post: () => new Promise(() => {}), close: async () => {} },
    });
    if (withWebhook) await service.register({ url: 'http://127.0.0.1:9/hook', events: ['message.received'] });
    const raw = Buffer.from('From: a@example.com\r\nSubject: hi\r\n\r\nhello\r\n');
    const stored = Array.from({ length: 5_000 }, (_, i) => messages.deliver([`user-${i % 1000}@mailroom.test`], raw, 'a@example.com')[0]!);
    const started = performance.now();
    for (const message of stored) {
      attempts.publish(acceptedAttempt(message, clock.now()), message);
    }
    void service.close();
    return ((performance.now() - started) * 1000) / stored.length;
  };
  const measure = async (withWebhook: boolean) => {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) runs.push(await once(withWebhook));
    return median(runs);
  };
  return { none: await measure(false), one: await measure(true) };
}

export const webhooksBench: BenchSection = {
  name: 'webhooks',
  description: 'webhook fan-out latency (SMTP 250 to the receiver), and SMTP ingest with one webhook registered against none',
  async run() {
    if (STORE === 'redis') redis = await startRedisServer({ priority: 'normal' });
    try {
      await runBench();
    } finally {
      await redis?.close();
      redis = undefined;
    }
  },
};

/** Adds a round's value to its series. */
function append<K, V>(series: Map<K, V[]>, key: K, value: V): void {
  series.set(key, [...(series.get(key) ?? []), value]);
}

async function runBench(): Promise<void> {
  console.log(`every server on the ${STORE} store (BENCH_WEBHOOKS_STORE=memory|redis)`);
  console.log(`fan-out: ${LATENCY_MAILS} mails one at a time after 50 warm-up (BENCH_WEBHOOK_MAILS adjusts)`);
  const latencies = await fanOutLatency();
  // A 250 is written before the event's body is built (the body waits for the next turn of the loop), so the POST can reach the receiver a hair before nodemailer has read the 250.
  const early = latencies.filter((ms) => ms < 0).length;
  console.log(
    `  SMTP 250 to the receiver's first byte: ${describe(latencies, formatMs(2))}${early ? ` (${early} arrived before the sender had read its 250)` : ''}`,
  );
  console.log(`  target p50 <= 10 ms: ${verdict(percentile(latencies, 50) <= 10)}`);

  console.log(
    `\ningest: ${ROUNDS} rounds x ${MESSAGES_PER_ROUND} messages per server and send mode after ${WARMUP_MESSAGES} warm-up, nodemailer pool of 4, each server in its own process, the receiver in a third (BENCH_ROUNDS, BENCH_MESSAGES, BENCH_WARMUP adjust)`,
  );
  const sinkPort = await freePort();
  const sink = startChild(process.execPath, ['--import', 'tsx', 'bench/webhook-sink.ts', String(sinkPort)], PRODUCTION);
  await waitFor('webhook sink', sink, () => /listening/.test(sink.output()));
  const targets = [
    { name: 'no webhook', ...(await serve('mailroom, no webhook', [])) },
    { name: 'one webhook', ...(await serve('mailroom, one webhook', ['--webhook', `http://127.0.0.1:${sinkPort}/hook`, '--webhook-secret', 'bench'])) },
  ];
  const hooked = targets[1]!;
  // Drained when the receiver has had a post for every message so far: asking the receiver, not the
  // server, keeps the polling off the server's CPU that the round measures.
  let posts = 0;
  const drain = async (sent: number) => {
    const started = performance.now();
    posts += sent;
    while (Number(await (await request(`http://127.0.0.1:${sinkPort}/count`)).body.text()) < posts) await sleep(20);
    return performance.now() - started;
  };
  const rates = new Map<string, number[]>();
  const cpus = new Map<string, { main: number; all: number }[]>();
  // Where the machine's CPU went while a round was sent: how busy all its cores were, and what the sender and the receiver spent a message.
  const machine = new Map<string, { busy: number; sender: number; receiver: number }[]>();
  const drains: number[] = [];
  const delivered = new Map<SendMode, number[]>();
  try {
    for (const target of targets) await sendBatch(target.port, WARMUP_MESSAGES, 1_000_000, 'composed');
    // The warm-up and the 4 messages that open each batch's pool are posted too.
    await drain(WARMUP_MESSAGES + 4);
    let offset = 0;
    for (const mode of ['composed', 'precomposed'] as const satisfies readonly SendMode[]) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
          const key = `${mode} ${target.name}`;
          const before = processCpuNs(target.child.child.pid);
          const receiverBefore = processCpuNs(sink.child.pid);
          const { result: rate, busy, ownCpuUs } = await withMachineCost(() => sendBatch(target.port, MESSAGES_PER_ROUND, offset, mode));
          offset += MESSAGES_PER_ROUND + 4;
          const drained = target === hooked ? await drain(MESSAGES_PER_ROUND + 4) : undefined;
          // After the drain: the delivery thread's work for the round is counted in full.
          const after = processCpuNs(target.child.child.pid);
          const receiverAfter = processCpuNs(sink.child.pid);
          const perMessage = (a: number, b: number) => (a - b) / 1000 / (MESSAGES_PER_ROUND + 4);
          const cpu = before && after ? { main: perMessage(after.main, before.main), all: perMessage(after.all, before.all) } : undefined;
          if (cpu) append(cpus, key, cpu);
          append(machine, key, {
            busy,
            sender: ownCpuUs / (MESSAGES_PER_ROUND + 4),
            receiver: receiverBefore && receiverAfter ? perMessage(receiverAfter.all, receiverBefore.all) : Number.NaN,
          });
          if (drained !== undefined) {
            drains.push(drained);
            // The round's mail over the time until its last post arrived: what the webhooks keep up with, not what the intake takes in while their queue grows.
            const sendMs = (MESSAGES_PER_ROUND / rate) * 1000;
            append(delivered, mode, MESSAGES_PER_ROUND / ((sendMs + drained) / 1000));
          }
          append(rates, key, rate);
          console.log(
            `  ${mode.padEnd(11)} round ${round + 1}: ${target.name.padEnd(12)} ${rate.toFixed(0).padStart(6)} msgs/s${cpu ? `  CPU/msg: SMTP thread ${cpu.main.toFixed(0).padStart(4)} us, all threads ${cpu.all.toFixed(0).padStart(4)} us` : ''}${drained === undefined ? '' : `   queue drained ${formatMs(0)(drained)} after the last 250`}`,
          );
        }
      }
    }
    console.log(`  the receiver had ${posts} webhook posts, one per message`);
  } finally {
    await Promise.all([...targets.map((t) => t.child.stop()), sink.stop()]);
  }
  for (const mode of ['composed', 'precomposed'] as const) {
    const none = median(rates.get(`${mode} no webhook`)!);
    const one = median(rates.get(`${mode} one webhook`)!);
    const ratio = one / none;
    const cpuOf = (name: string, which: 'main' | 'all') => median((cpus.get(`${mode} ${name}`) ?? []).map((c) => c[which]));
    const mainNone = cpuOf('no webhook', 'main');
    const mainOne = cpuOf('one webhook', 'main');
    console.log(
      `\n  median msgs/s, ${mode === 'composed' ? 'nodemailer composing each message (what an app does)' : 'nodemailer sending a pre-composed source (the server is the bottleneck)'}: no webhook ${none.toFixed(0)}, one webhook ${one.toFixed(0)}: ${ratio.toFixed(2)}x (target >= 0.9x: ${verdict(ratio >= 0.9)})`,
    );
    // Each round's two servers ran back to back: their ratio, round by round, shows the spread the load left in the rates.
    const paired = rates.get(`${mode} one webhook`)!.map((rate, i) => rate / rates.get(`${mode} no webhook`)![i]!);
    console.log(
      `    round by round, one webhook / none: median ${median(paired).toFixed(2)}x, from ${Math.min(...paired).toFixed(2)}x to ${Math.max(...paired).toFixed(2)}x (n=${paired.length})`,
    );
    const sustained = median(delivered.get(mode) ?? []);
    console.log(
      `    delivered, a round's mail over its sending and its queue's drain: median ${sustained.toFixed(0)} msgs/s, ${(sustained / none).toFixed(2)}x the rate with no webhook (the queue grows while the rate above holds)`,
    );
    const machineOf = (name: string, which: 'busy' | 'sender' | 'receiver') => median((machine.get(`${mode} ${name}`) ?? []).map((m) => m[which]));
    if (Number.isFinite(machineOf('no webhook', 'busy'))) {
      // With no webhook the sender is the bottleneck; a webhook adds its delivery and its receiver's work, and once every core is busy the rate can only fall.
      console.log(
        `    the machine while a round was sent (all ${availableParallelism()} cores, /proc/stat): no webhook ${(100 * machineOf('no webhook', 'busy')).toFixed(0)}% busy, one webhook ${(100 * machineOf('one webhook', 'busy')).toFixed(0)}%; CPU per message, the sender ${machineOf('no webhook', 'sender').toFixed(0)} us and ${machineOf('one webhook', 'sender').toFixed(0)} us, the receiver ${machineOf('one webhook', 'receiver').toFixed(0)} us`,
      );
    }
    if (Number.isFinite(mainNone)) {
      const allNone = cpuOf('no webhook', 'all');
      const allOne = cpuOf('one webhook', 'all');
      console.log(
        `    server CPU per message, the SMTP thread: no webhook ${mainNone.toFixed(0)} us, one webhook ${mainOne.toFixed(0)} us (${((100 * mainOne) / mainNone).toFixed(0)}%); all threads (first mail to last delivery): no webhook ${allNone.toFixed(0)} us, one webhook ${allOne.toFixed(0)} us (${(allOne / allNone).toFixed(2)}x)`,
      );
      // Issue 45: what a delivery adds to the server (all its threads, the round's drain included) against what taking the mail in costs it.
      console.log(
        `    a delivery adds ${(allOne - allNone).toFixed(0)} us of server CPU per message, ${((allOne - allNone) / allNone).toFixed(2)}x the intake's ${allNone.toFixed(0)} us (target <= 1x: ${verdict(allOne - allNone <= allNone)})`,
      );
    }
  }
  console.log(`  the queue drained ${describe(drains, formatMs(0), [50])} after a round's last 250`);
  if (STORE === 'redis') return;
  const work = await fanOutWorkPerMessage();
  console.log(
    `\n  the fan-out's own work on the SMTP path per accepted message, in process (lookup, event, queue; no parse, no serialise): ${work.one.toFixed(2)} us with one webhook, ${work.none.toFixed(2)} us with none`,
  );
}
