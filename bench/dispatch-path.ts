// The SMTP thread's share of a webhook delivery, in one process, without
// SMTP or HTTP: accepted mail published into the webhook service (memory
// store, system timers) whose sender clones each run as a hand-over to a
// thread would and answers 204 for every job on the next turn. CPU us per
// event over BENCH_EVENTS events, published in bursts of 4 per turn, the
// median of BENCH_ROUNDS rounds (each with a fresh service).
// `node --import tsx bench/dispatch-path.ts`
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DeliveryJob, DeliveryOutcome } from '../src/server/webhooks/delivery-job.js';
import { acceptedAttempt } from './support.js';

// The built code by default (`npm run build`; BENCH_DIST names another build, e.g. a copy of the one before a change): what `mailroom serve` runs.
const DIST = resolve(process.env.BENCH_DIST ?? 'dist');
const from = async <T>(path: string): Promise<T> => (await import(pathToFileURL(`${DIST}/${path}`).href)) as T;
const { AttemptFeed } = await from<typeof import('../src/server/base/smtp-attempts.js')>('server/base/smtp-attempts.js');
const { MessageStore } = await from<typeof import('../src/server/store/message-store.js')>('server/store/message-store.js');
const { systemTimers } = await from<typeof import('../src/server/webhooks/dispatcher.js')>('server/webhooks/dispatcher.js');
const { createWebhookService } = await from<typeof import('../src/server/webhooks/webhook-service.js')>('server/webhooks/webhook-service.js');

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const PROFILE = process.env.BENCH_PROFILE;
let profiles = 0;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const { port1, port2 } = new MessageChannel();
port2.on('message', () => {});
port1.unref();
port2.unref();

async function round(): Promise<number> {
  const clock = { now: () => Date.now() };
  const messages = new MessageStore({ clock, retention: 3_600_000, maxMessages: Infinity });
  const attempts = new AttemptFeed(() => {});
  const source = `From: Acme <noreply@acme.example>\r\nTo: x@mailroom.test\r\nSubject: code\r\n\r\n${'hello '.repeat(200)}\r\n`;
  let posted = 0;
  const answer = (jobs: readonly DeliveryJob[]): Promise<readonly DeliveryOutcome[]> => {
    port1.postMessage({ type: 'run', id: 1, jobs });
    posted += jobs.length;
    return new Promise((resolve) =>
      setImmediate(() => resolve(jobs.map(() => ({ result: { kind: 'answer', status: 204, retryAfter: undefined }, latencyMs: 1.234, excerpt: '' })))),
    );
  };
  const service = createWebhookService({
    attempts,
    rawUrl: (m) => `http://127.0.0.1:1080/api/messages/${m.id}/raw`,
    readSource: () => Promise.resolve(source),
    mailboxKey: (address) => address,
    now: clock.now,
    random: Math.random,
    logger: { info() {}, warn() {}, error() {} },
    timers: systemTimers(clock.now),
    sender: { post: async (job) => (await answer([job]))[0]!, postRun: answer, close: async () => {} },
  });
  await service.register({ url: 'http://127.0.0.1:9/hook', events: ['message.received'], secret: 'bench' });
  const raw = Buffer.from(source, 'latin1');
  const stored = Array.from({ length: EVENTS }, (_, i) => messages.deliver([`user-${i % 1000}@mailroom.test`], raw, 'a@example.com')[0]!);
  const session = PROFILE ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const cpu = process.cpuUsage();
  for (let i = 0; i < stored.length; i++) {
    const message = stored[i]!;
    attempts.publish(acceptedAttempt(message, clock.now()), message);
    if (i % 4 === 3) await new Promise((r) => setImmediate(r));
  }
  while (posted < EVENTS) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 5));
  const used = process.cpuUsage(cpu);
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(`${PROFILE}.${profiles++}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
  await service.close();
  return (used.user + used.system) / EVENTS;
}

const results: number[] = [];
for (let i = 0; i < ROUNDS; i++) results.push(await round());
results.sort((a, b) => a - b);
console.log(`us/event: ${results.map((r) => r.toFixed(1)).join(' ')}; median ${results[results.length >> 1]!.toFixed(1)}`);
process.exit(0);
