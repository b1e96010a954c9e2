// `npm run soak`: the embedded server at its ingest ceiling with the message
// cap set, for SOAK_MINUTES (default 10), printing memory every
// SOAK_INTERVAL_S (default 30) seconds: RSS and heap, mail sent and stored,
// evictions as the server logged them. Memory should plateau once the cap is
// reached: the store holds at most SOAK_MAX_MESSAGES (default 20,000).
// At the end, a wait whose mail the cap pushed out, and what it says.
//   SOAK_MINUTES=2 npm run soak
import nodemailer from 'nodemailer';
import { createInbox, MailTimeoutError } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { internalsOf } from '../src/server/start-server.js';
import type { MessageStore } from '../src/server/store/message-store.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 10);
const intervalS = Number(process.env.SOAK_INTERVAL_S ?? 30);
const maxMessages = Number(process.env.SOAK_MAX_MESSAGES ?? 20_000);
const connections = Number(process.env.SOAK_CONNECTIONS ?? 4);
for (const [name, value] of Object.entries({
  SOAK_MINUTES: minutes,
  SOAK_INTERVAL_S: intervalS,
  SOAK_MAX_MESSAGES: maxMessages,
  SOAK_CONNECTIONS: connections,
})) {
  if (!(value > 0)) throw new Error(`${name} must be a positive number, got ${process.env[name]}`);
}

let evicted = 0;
let evictionLines = 0;
const logger = {
  info: () => {},
  warn: (message: string) => {
    const many = /evicted the (\d+) oldest messages/.exec(message);
    if (many || /evicted the oldest message/.test(message)) {
      evictionLines++;
      evicted += many ? Number(many[1]) : 1;
    } else console.warn(message);
  },
  error: (message: string) => console.error(message),
};
const server = await startServer({ smtpPort: 0, httpPort: 0, maxMessages, listPerSecond: Infinity, logger });
// the soak runs the memory store, whose size is known at once
const store = internalsOf(server).store as MessageStore;
const transport = nodemailer.createTransport({
  host: '127.0.0.1',
  port: server.smtpPort,
  ignoreTLS: true,
  pool: true,
  maxConnections: connections,
  maxMessages: Infinity,
});
const body = `${'Soak test body line, about a hundred characters long, to make each message a realistic size.\n'.repeat(20)}`;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

let sent = 0;
let failed = 0;
let running = true;
async function sender(lane: number): Promise<void> {
  for (let n = 0; running; n++) {
    try {
      await transport.sendMail({ from: 'soak@example.com', to: `soak-${lane}-${n % 500}@mailroom.test`, subject: `soak ${lane}/${n}`, text: body });
      sent++;
    } catch {
      failed++;
    }
  }
}

console.log(`soak: ${minutes} min, maxMessages ${maxMessages}, ${connections} SMTP connections, ${connections * 2} senders; a line every ${intervalS} s`);
console.log('elapsed_s  sent  per_s  stored  evicted  eviction_log_lines  rss_mb  heap_mb  buffers_mb  failed');
const started = performance.now();
const senders = Array.from({ length: connections * 2 }, (_, lane) => sender(lane));
/** RSS of each sample, and whether the store was full (at the cap) when it was taken. */
const series: { rss: number; full: boolean }[] = [];
let lastSent = 0;
await new Promise<void>((resolve) => {
  const tick = setInterval(() => {
    const elapsed = (performance.now() - started) / 1000;
    const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
    series.push({ rss, full: store.size >= maxMessages });
    const rate = (sent - lastSent) / intervalS;
    lastSent = sent;
    console.log(
      `${elapsed.toFixed(0).padStart(9)}  ${String(sent).padStart(4)}  ${rate.toFixed(0).padStart(5)}  ${String(store.size).padStart(6)}  ${String(evicted).padStart(7)}  ${String(evictionLines).padStart(18)}  ${mb(rss).padStart(6)}  ${mb(heapUsed).padStart(7)}  ${mb(arrayBuffers).padStart(10)}  ${failed}`,
    );
    if (elapsed >= minutes * 60 - 1) {
      clearInterval(tick);
      resolve();
    }
  }, intervalS * 1000);
});
running = false;
await Promise.all(senders);

// Memory after the cap filled: the first sample taken with the store full against the last one.
const full = series.filter((sample) => sample.full);
if (full.length >= 2) {
  const base = full[0]!.rss;
  const last = full.at(-1)!.rss;
  const peak = Math.max(...full.map((sample) => sample.rss));
  console.log(
    `rss with the store full, from the first sample to the last: ${mb(base)} MB -> ${mb(last)} MB (${(((last - base) / base) * 100).toFixed(1)} %), peak ${mb(peak)} MB`,
  );
}

// A wait whose mail the cap pushed out before the wait looked.
const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0] });
await transport.sendMail({ from: 'soak@example.com', to: inbox.address, subject: 'pushed out', text: 'x' });
for (let i = 0; i < maxMessages; i++) await transport.sendMail({ from: 'soak@example.com', to: `flood-${i % 500}@mailroom.test`, subject: 'flood', text: 'x' });
try {
  await inbox.expectMail({ subject: 'pushed out' }, { timeout: 3000 });
  console.log('the evicted mail was found?!');
} catch (error) {
  console.log(`a wait whose mail was evicted fails with:\n${error instanceof MailTimeoutError ? error.message : String(error)}`);
}
transport.close();
await server.close();
console.log(`total: ${sent} sent, ${failed} failed, ${evicted} evicted (logged in ${evictionLines} lines), ${store.size} stored at the end`);
