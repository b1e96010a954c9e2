// `npm run bench -- store-bytes` (also run by `npm run bench -- store`;
// issue 27): what one stored message costs in memory, against its raw size.
//
// For each mail size (BENCH_STORE_BYTES_SIZES, default 2 KiB and 20 KiB,
// each mail composed to exactly that many bytes) and each store, one
// `mailroom serve` (NODE_ENV=production, `--max-messages unlimited
// --max-store-bytes unlimited`, so nothing is evicted) is filled over SMTP to
// each point of BENCH_STORE_BYTES_POINTS (default 20,000 and 100,000), over
// BENCH_STORE_BYTES_ADDRESSES (default 10,000) addresses, and measured at 0
// (after a warm-up that is deleted again) and at each point:
//
//  - the server process: garbage collected (twice, `--expose-gc`, on a
//    SIGUSR2 a probe loaded with `--import` answers), then its RSS and its
//    live JS bytes (heapUsed + arrayBuffers: the heap and the Buffers outside it);
//  - with the Redis store, also redis-server's `INFO memory` used_memory and
//    used_memory_rss.
//
// Then (unless BENCH_STORE_BYTES_CAPACITY=0) the capacity figure of
// docs/server.md: a memory-store server with the default caps, sent 20% more
// mail of each size than the caps keep, measured full.
// BENCH_STORE_BYTES_ARGS adds `mailroom serve` arguments (`--no-smtp-rules`:
// what the attempt log costs); BENCH_STORE_BYTES_SNAPSHOTS=dir writes a
// heap snapshot at every measurement.
//
// Per message = (bytes at N - bytes at 0) / N; the verdict is that the
// memory store's RSS per message is at most 2x the raw size (the fixed base
// being the server at 0), and that the node process of a Redis-backed
// server holds about nothing per message (at most 1 KiB live), while
// redis-server holds at most 2x raw per message.
import { readFileSync } from 'node:fs';
import nodemailer, { type Transporter } from 'nodemailer';
import { createClient } from '@redis/client';
import { request } from 'undici';
import { MAX_LIST_LIMIT } from '../src/contract/limits.js';
import { MAILBOXES_PATH } from '../src/contract/routes.js';
import type { WireMailboxes } from '../src/contract/wire.js';
import { DEFAULTS } from '../src/server/server-options.js';
import { PER_MESSAGE_BYTES } from '../src/server/store/byte-budget.js';
import { startRedisServer } from '../test/support/redis-server.js';
import type { BenchSection } from './section.js';
import { sleep, startServerProcess, verdict, waitFor, type Child } from './support.js';

const SIZES = (process.env.BENCH_STORE_BYTES_SIZES ?? '2048,20480').split(',').map(Number);
const POINTS = (process.env.BENCH_STORE_BYTES_POINTS ?? '20000,100000').split(',').map(Number);
const ADDRESSES = Number(process.env.BENCH_STORE_BYTES_ADDRESSES ?? 10_000);
const STORES = (process.env.BENCH_STORE_BYTES_STORES ?? 'memory,redis').split(',');
/** More `mailroom serve` arguments, e.g. `--no-smtp-rules` (what the attempt log costs). */
const EXTRA_ARGS = (process.env.BENCH_STORE_BYTES_ARGS ?? '').split(' ').filter(Boolean);
/** Also fill a server with the default caps to its capacity (BENCH_STORE_BYTES_CAPACITY=0 skips it). */
const CAPACITY = process.env.BENCH_STORE_BYTES_CAPACITY !== '0';
const SENDERS = 8;
const WARMUP = 500;
const PRODUCTION = { ...process.env, NODE_ENV: 'production' };

// Loaded into the server with --import: on SIGUSR2, a full GC and one line of process.memoryUsage().
const PROBE_MARK = 'store-bytes-probe';
// With BENCH_STORE_BYTES_SNAPSHOTS=dir it also writes a heap snapshot there (to see where the bytes are).
const PROBE = `data:text/javascript,${encodeURIComponent(
  `import { writeHeapSnapshot } from 'node:v8';
  process.on('SIGUSR2', () => {
    globalThis.gc(); globalThis.gc();
    const usage = JSON.stringify(process.memoryUsage());
    const dir = process.env.BENCH_STORE_BYTES_SNAPSHOTS;
    const snapshot = dir ? ' ' + writeHeapSnapshot(dir + '/store-bytes-' + Date.now() + '.heapsnapshot') : '';
    process.stdout.write('${PROBE_MARK} ' + usage + snapshot + '\\n');
  });`,
)}`;

/** A plain-text mail of exactly `size` bytes; `n` (a fixed-width counter) is written into its subject and body. */
function composer(size: number): (to: string, n: number) => Buffer {
  return (to, n) => {
    const tag = String(n).padStart(9, '0');
    const head = [
      'From: Acme <noreply@acme.example>',
      `To: ${to}`,
      `Subject: Your receipt ${tag}`,
      `Message-ID: <${tag}.${size}@acme.example>`,
      'Date: Wed, 02 Dec 2026 12:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Receipt ${tag}.`,
      '',
    ].join('\r\n');
    const line = 'Thank you for your order; this line fills the mail to its size.  ';
    let body = '';
    while (head.length + body.length + line.length + 2 <= size) body += `${line}\r\n`;
    const rest = size - head.length - body.length;
    const tail = rest >= 2 ? `${'x'.repeat(rest - 2)}\r\n` : 'x'.repeat(rest);
    const source = Buffer.from(head + body + tail);
    if (source.length !== size) throw new Error(`composed ${source.length} bytes, wanted ${size}`);
    return source;
  };
}

interface Sample {
  readonly rss: number;
  /** heapUsed + arrayBuffers after GC. */
  readonly live: number;
  readonly heapUsed: number;
  readonly arrayBuffers: number;
  readonly redisUsed?: number;
  readonly redisRss?: number;
}

interface Server {
  readonly smtpPort: number;
  readonly apiURL: string;
  readonly child: Child;
}

const UNCAPPED = ['--max-messages', 'unlimited', '--max-store-bytes', 'unlimited'];

/** `caps`: the cap arguments (none: the defaults). */
async function startServer(store: string, caps: readonly string[] = UNCAPPED): Promise<Server> {
  const { smtpPort, apiURL, child } = await startServerProcess({
    nodeFlags: ['--expose-gc', '--import', PROBE],
    args: [...caps, '--store', store, ...EXTRA_ARGS],
    env: PRODUCTION,
  });
  return { smtpPort, apiURL, child };
}

/** GC in the server, then what it holds (the probe's line, read off its output). */
async function probe(server: Server): Promise<Omit<Sample, 'redisUsed' | 'redisRss'>> {
  const before = server.child.output().split(PROBE_MARK).length;
  server.child.child.kill('SIGUSR2');
  await waitFor('the memory probe', server.child, () => server.child.output().split(PROBE_MARK).length > before, 30_000);
  const [usageJson, snapshot] = server.child.output().split(PROBE_MARK).at(-1)!.split('\n')[0]!.trim().split(' ');
  const usage = JSON.parse(usageJson!) as NodeJS.MemoryUsage;
  if (snapshot) console.log(`  heap snapshot: ${snapshot}`);
  // VmRSS from /proc, the same number `ps` shows (memoryUsage().rss reads it too)
  const status = readFileSync(`/proc/${server.child.child.pid}/status`, 'utf8');
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN) * 1024;
  return { rss, live: usage.heapUsed + usage.arrayBuffers, heapUsed: usage.heapUsed, arrayBuffers: usage.arrayBuffers };
}

function transports(smtpPort: number): Transporter[] {
  return Array.from({ length: SENDERS }, () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity }),
  );
}

/** Sends mails number `from` to `to - 1`, to `user-(n % ADDRESSES)`, one at a time per sender. */
async function fill(senders: readonly Transporter[], compose: (to: string, n: number) => Buffer, from: number, to: number, prefix = 'user'): Promise<void> {
  let next = from;
  await Promise.all(
    senders.map(async (t) => {
      for (let n = next++; n < to; n = next++) {
        const address = `${prefix}-${n % ADDRESSES}@mailroom.test`;
        await t.sendMail({ envelope: { from: 'noreply@acme.example', to: address }, raw: compose(address, n) });
      }
    }),
  );
}

async function deleteMailbox(apiURL: string, address: string): Promise<void> {
  const response = await request(`${apiURL}/api/v1/mailbox?${new URLSearchParams({ address })}`, { method: 'DELETE' });
  await response.body.text();
  if (response.statusCode >= 300) throw new Error(`DELETE mailbox ${address} answered ${response.statusCode}`);
}

/** The stored count and sizes of one mailbox: proof the mail is all there, at its size. */
async function checkStored(apiURL: string, total: number, size: number): Promise<void> {
  const address = 'user-0@mailroom.test';
  const response = await request(`${apiURL}/api/v1/mailbox?${new URLSearchParams({ address, limit: String(MAX_LIST_LIMIT) })}`);
  const body = (await response.body.json()) as { messages?: Array<{ size: number }> };
  if (response.statusCode !== 200) throw new Error(`GET mailbox ${address} answered ${response.statusCode}: ${JSON.stringify(body)}`);
  const expected = Math.ceil(total / ADDRESSES);
  const messages = body.messages ?? [];
  if (messages.length !== Math.min(expected, MAX_LIST_LIMIT) || messages.some((m) => m.size !== size)) {
    throw new Error(
      `${address} holds ${messages.length} messages (sizes ${[...new Set(messages.map((m) => m.size))].join(', ')}), expected ${expected} of ${size} bytes`,
    );
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

interface Row {
  readonly store: string;
  readonly size: number;
  readonly count: number;
  readonly base: Sample;
  readonly at: Sample;
}

async function measure(storeName: string, store: string, size: number, redisInfo?: () => Promise<{ used: number; rss: number }>): Promise<Row[]> {
  const compose = composer(size);
  const server = await startServer(store);
  const senders = transports(server.smtpPort);
  const sample = async (): Promise<Sample> => {
    const node = await probe(server);
    const redis = redisInfo ? await redisInfo() : undefined;
    return { ...node, redisUsed: redis?.used, redisRss: redis?.rss };
  };
  try {
    await warmUp(server, senders, compose);
    const base = await sample();
    const rows: Row[] = [];
    let sent = 0;
    for (const count of POINTS) {
      const started = performance.now();
      await fill(senders, compose, sent, count);
      sent = count;
      await checkStored(server.apiURL, count, size);
      const at = await sample();
      const row = { store: storeName, size, count, base, at };
      rows.push(row);
      console.log(`  ${storeName}, ${size} B mails: ${count} stored (filled in ${((performance.now() - started) / 1000).toFixed(1)} s); ${describeRow(row)}`);
    }
    return rows;
  } finally {
    for (const t of senders) t.close();
    await server.child.stop();
  }
}

/** Opens the connections and warms the code paths, then takes the mail away again. */
async function warmUp(server: Server, senders: readonly Transporter[], compose: (to: string, n: number) => Buffer): Promise<void> {
  await fill(senders, compose, 0, WARMUP, 'warmup');
  for (let i = 0; i < Math.min(WARMUP, ADDRESSES); i++) await deleteMailbox(server.apiURL, `warmup-${i}@mailroom.test`);
  await sleep(200);
}

/** Every message the server holds: the counts of all its mailboxes (GET /mailboxes, page by page). */
async function storedCount(apiURL: string): Promise<number> {
  let total = 0;
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(MAX_LIST_LIMIT), ...(cursor === undefined ? {} : { cursor }) });
    const response = await request(`${apiURL}${MAILBOXES_PATH}?${query}`);
    const body = (await response.body.json()) as WireMailboxes;
    if (response.statusCode !== 200) throw new Error(`GET ${MAILBOXES_PATH} answered ${response.statusCode}: ${JSON.stringify(body)}`);
    for (const entry of body.mailboxes) total += entry.count;
    cursor = body.next_cursor;
  } while (cursor !== undefined);
  return total;
}

/**
 * The capacity figure: a memory-store server with the default caps, sent
 * 20% more mail of `size` bytes than its caps let it keep (the byte cap
 * charges each mail its size plus PER_MESSAGE_BYTES), measured once full.
 */
async function capacity(size: number): Promise<{ stored: number; base: Sample; at: Sample }> {
  const compose = composer(size);
  const server = await startServer('memory', []);
  const senders = transports(server.smtpPort);
  try {
    await warmUp(server, senders, compose);
    const base = await probe(server);
    const keeps = Math.min(DEFAULTS.maxMessages, Math.floor(DEFAULTS.maxStoreBytes / (size + PER_MESSAGE_BYTES)));
    await fill(senders, compose, 0, Math.ceil(keeps * 1.2));
    const at = await probe(server);
    return { stored: await storedCount(server.apiURL), base, at };
  } finally {
    for (const t of senders) t.close();
    await server.child.stop();
  }
}

const perMessage = (row: Row, pick: (s: Sample) => number | undefined) => ((pick(row.at) ?? NaN) - (pick(row.base) ?? NaN)) / row.count;

function describeRow(row: Row): string {
  const parts = [
    `server RSS ${mib(row.base.rss)} -> ${mib(row.at.rss)} (${perMessage(row, (s) => s.rss).toFixed(0)} B/msg)`,
    `live heap+buffers ${mib(row.base.live)} -> ${mib(row.at.live)} (${perMessage(row, (s) => s.live).toFixed(0)} B/msg)`,
  ];
  if (row.at.redisUsed !== undefined)
    parts.push(`redis used_memory ${mib(row.base.redisUsed!)} -> ${mib(row.at.redisUsed)} (${perMessage(row, (s) => s.redisUsed).toFixed(0)} B/msg)`);
  return parts.join('; ');
}

async function redisMemory(url: string): Promise<() => Promise<{ used: number; rss: number }>> {
  const client = createClient({ url });
  await client.connect();
  const read = async () => {
    const info = await client.info('memory');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
    return { used: field('used_memory'), rss: field('used_memory_rss') };
  };
  return Object.assign(read, { close: () => client.quit() });
}

export const storeBytesBench: BenchSection = {
  name: 'store-bytes',
  partOf: 'store',
  description: 'bytes per stored message (server RSS and live heap after GC, and Redis used_memory) against the raw size',
  async run() {
    console.log(
      `mails of ${SIZES.join(' and ')} bytes, stored to ${POINTS.join(' and ')} over ${ADDRESSES} addresses, stores: ${STORES.join(', ')}${EXTRA_ARGS.length > 0 ? `, serve ${EXTRA_ARGS.join(' ')}` : ''} (BENCH_STORE_BYTES_SIZES, BENCH_STORE_BYTES_POINTS, BENCH_STORE_BYTES_ADDRESSES, BENCH_STORE_BYTES_STORES, BENCH_STORE_BYTES_ARGS adjust)`,
    );
    const rows: Row[] = [];
    for (const size of SIZES) {
      if (STORES.includes('memory')) rows.push(...(await measure('memory', 'memory', size)));
      if (STORES.includes('redis')) {
        // a fresh redis-server per size, so its base is its own
        const redis = await startRedisServer({ priority: 'normal' });
        try {
          const info = await redisMemory(redis.url());
          try {
            rows.push(...(await measure('Redis', redis.url('bytes'), size, info)));
          } finally {
            await (info as unknown as { close(): Promise<unknown> }).close();
          }
        } finally {
          await redis.close();
        }
      }
    }
    console.log(
      '\n  | store | mail size | messages | server RSS at 0 -> N (per msg, x raw) | server live heap+buffers (per msg, x raw) | redis used_memory (per msg, x raw) |',
    );
    console.log('  | --- | --- | --- | --- | --- | --- |');
    for (const row of rows) {
      const cell = (pick: (s: Sample) => number | undefined) => {
        const per = perMessage(row, pick);
        return `${mib(pick(row.base)!)} -> ${mib(pick(row.at)!)} (${per.toFixed(0)} B, ${(per / row.size).toFixed(2)}x)`;
      };
      const redis = row.at.redisUsed === undefined ? '-' : cell((s) => s.redisUsed);
      console.log(`  | ${row.store} | ${row.size} B | ${row.count} | ${cell((s) => s.rss)} | ${cell((s) => s.live)} | ${redis} |`);
    }
    console.log('');
    for (const row of rows) {
      const rss = perMessage(row, (s) => s.rss);
      if (row.store === 'memory') {
        console.log(
          `  memory store, ${row.count} mails of ${row.size} B: ${rss.toFixed(0)} B of RSS per mail = ${(rss / row.size).toFixed(2)}x raw over a base of ${mib(row.base.rss)} (target <= 2x raw + base: ${verdict(rss <= 2 * row.size)})`,
        );
      } else {
        const used = perMessage(row, (s) => s.redisUsed);
        const live = perMessage(row, (s) => s.live);
        // The process's live bytes are what it holds; its RSS also keeps what the allocator kept of the ingest's passing buffers.
        console.log(
          `  Redis store, ${row.count} mails of ${row.size} B: the server process holds ${live.toFixed(0)} B live per mail (target <= 1 KiB: ${verdict(live <= 1024)}; its RSS grew ${rss.toFixed(0)} B per mail); redis-server ${used.toFixed(0)} B per mail = ${(used / row.size).toFixed(2)}x raw (target <= 2x: ${verdict(used <= 2 * row.size)})`,
        );
      }
    }
    if (!CAPACITY) return;
    console.log(
      `\n  capacity of a default server (maxMessages ${DEFAULTS.maxMessages}, maxStoreBytes ${mib(DEFAULTS.maxStoreBytes)}, memory store), sent 20% more than its caps keep:`,
    );
    for (const size of SIZES) {
      const { stored, base, at } = await capacity(size);
      console.log(
        `  holds ${stored} mails of ${size % 1024 === 0 ? `${size / 1024} KiB` : `${size} B`} in ${mib(at.rss)} of RSS (${mib(at.live)} live heap+buffers; ${mib(base.rss)} of RSS when empty)`,
      );
    }
  },
};
