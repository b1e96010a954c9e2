// What one `message.received` delivery costs the server, without SMTP
// (`npm run bench -- delivery-thread`): the webhooks' delivery thread
// (src/server/webhooks/threaded-sender.ts) is handed runs of 64 events, as
// the dispatcher hands an ordered endpoint's backlog, each carrying a
// nodemailer-composed mail, and posts them to a receiver in its own
// process. Each round reads this process's threads' CPU from /proc: the
// delivery thread (body built from the source, signed, posted), the rest
// (V8's GC helpers, libuv), and the thread handing the runs over. Issue 45
// asks that a delivery cost the server no more than taking its mail in
// (bench/webhooks.ts prints both); with the sender and the SMTP intake off
// the machine, this measure moves much less with the load than that one.
import { readdirSync, readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import type { DeliveryJob } from '../src/server/webhooks/delivery-job.js';
import { ThreadedSender } from '../src/server/webhooks/threaded-sender.js';
import type { BenchSection } from './section.js';
import { freePort, median, sleep, startChild, waitFor } from './support.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 12_800);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const RUN = 64;

/** CPU ns so far of each of this process's threads, by thread id. */
function threadCpuNs(): Map<string, number> {
  return new Map(readdirSync('/proc/self/task').map((tid) => [tid, Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0])]));
}

/** The bench's mail (bench/server.ts): a code, as text and HTML, composed by nodemailer; 50 of them, each with its own Message-ID. */
async function composedSources(): Promise<string[]> {
  const text = `Hello,\n\nYour sign-in code is 482913. It expires in 10 minutes.\n\n${'If you did not ask for this code, you can ignore this message. '.repeat(5)}\n\nThe Acme team\n`;
  const html = `<html><body><p>Hello,</p><p>Your sign-in code is <b>482913</b>. It expires in 10 minutes.</p><p>${'If you did not ask for this code, you can ignore this message. '.repeat(5)}</p><p>The Acme team</p></body></html>`;
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true });
  return Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const info = await composer.sendMail({
        from: 'Acme <noreply@acme.example>',
        to: `user-${i}@mailroom.test`,
        subject: `Your sign-in code #${i}`,
        text,
        html,
      });
      return (info.message as Buffer).toString('latin1');
    }),
  );
}

export const deliveryThreadBench: BenchSection = {
  name: 'delivery-thread',
  description: "a message.received delivery's CPU in the server's delivery thread and the rest of its process, no SMTP",
  async run() {
    const sinkPort = await freePort();
    const sink = startChild(process.execPath, ['--import', 'tsx', 'bench/webhook-sink.ts', String(sinkPort)], { ...process.env, NODE_ENV: 'production' });
    await waitFor('webhook sink', sink, () => /listening/.test(sink.output()));
    const sources = await composedSources();
    const threadsBefore = new Set(readdirSync('/proc/self/task'));
    const sender = new ThreadedSender();
    sender.warm();
    await sleep(1_000);
    const deliveryThread = readdirSync('/proc/self/task').find((tid) => !threadsBefore.has(tid));
    let made = 0;
    const job = (): DeliveryJob => {
      const n = made++;
      const source = sources[n % sources.length]!;
      const id = `evt_${n}`;
      return {
        eventId: id,
        url: `http://127.0.0.1:${sinkPort}/hook`,
        secret: 'bench',
        at: Date.now(),
        timeoutMs: 10_000,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'mailroom-event-id': id,
          'mailroom-event-type': 'message.received',
          'mailroom-attempt': '1',
        },
        payload: {
          kind: 'message',
          envelope: { id, type: 'message.received', created_at: new Date().toISOString(), address: `user-${n % 1000}@mailroom.test` },
          message: { id: `m${n}`, receivedAt: Date.now(), size: source.length, envelopeFrom: 'noreply@acme.example', source },
          rawUrl: `http://127.0.0.1:8025/api/v1/message/m${n}/raw`,
        },
      };
    };
    const signal = new AbortController().signal;
    const deliver = async (events: number) => {
      for (let sent = 0; sent < events; sent += RUN) await sender.postRun(Array.from({ length: RUN }, job), signal);
    };
    console.log(`${ROUNDS} rounds of ${EVENTS} events in runs of ${RUN}, after ${EVENTS / 4} warm-up (BENCH_ROUNDS, BENCH_EVENTS adjust)`);
    const totals: number[] = [];
    try {
      await deliver(EVENTS / 4);
      for (let round = 0; round < ROUNDS; round++) {
        const before = threadCpuNs();
        const started = performance.now();
        await deliver(EVENTS);
        const seconds = (performance.now() - started) / 1000;
        let thread = 0;
        let handing = 0;
        let rest = 0;
        for (const [tid, ns] of threadCpuNs()) {
          const us = (ns - (before.get(tid) ?? ns)) / 1000 / EVENTS;
          if (tid === deliveryThread) thread += us;
          else if (tid === String(process.pid)) handing += us;
          else rest += us;
        }
        totals.push(thread + handing + rest);
        console.log(
          `  round ${round + 1}: CPU per event: delivery thread ${thread.toFixed(0)} us, GC helpers and libuv ${rest.toFixed(0)} us, handing over ${handing.toFixed(0)} us; all ${(thread + handing + rest).toFixed(0)} us (${(EVENTS / seconds).toFixed(0)} events/s)`,
        );
      }
    } finally {
      await sender.close();
      await sink.stop();
    }
    console.log(`  median CPU per delivered event, all of the process's threads: ${median(totals).toFixed(0)} us`);
  },
};
