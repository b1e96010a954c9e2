// The per-test path (issue 10), against the embedded server in its own
// process, through real sockets, as an app under test and a test would use it:
//
//  1. One message over a new SMTP connection, raw: connect, 220, EHLO, MAIL,
//     RCPT, DATA, the message, QUIT. Goal p50 <= 10 ms (smtp-server's stock
//     100 ms greeting hold made it about 105 ms).
//  2. nodemailer `sendMail()` over a new connection (no pool, as most apps
//     send) while `expectMail()` is already waiting: from the sendMail call
//     to the mail in hand. Goal p50 <= 25 ms, with the server wait (the
//     default) and, for the record, polling.
//  3. Mail already there 200 ms after `createInbox`: `expectMail()` from call
//     to return. Goal p50 <= 20 ms (a watermark read that spent the
//     address's list call made it about 800 ms).
// Every sample uses its own fresh address; samples run one after another.
//
// `BENCH_BACKEND=maildev` runs the same path against a real maildev in its own
// process (docs/backends.md): the wait is held on its socket.io push stream,
// goal p50 <= 150 ms from sendMail to the mail in hand; its SMTP is
// maildev's, so step 1 measures maildev, not mailroom.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { createInbox } from '../src/index.js';
import type { BackendName } from '../src/backends/backend.js';
import { parseBackendName } from '../src/backends/choose.js';
import { startMaildevProcess } from './maildev-process.js';
import type { BenchSection } from './section.js';
import { describe, formatMs, percentile, sleep, startServerProcess, verdict, type ServerProcess } from './support.js';

const SAMPLES = Number(process.env.BENCH_PER_TEST_SAMPLES ?? 40);
const WARMUP = 5;
const BACKEND: BackendName = process.env.BENCH_BACKEND?.trim() ? parseBackendName(process.env.BENCH_BACKEND, 'BENCH_BACKEND') : 'mailroom';

/** A whole SMTP dialogue of one message over a fresh socket; resolves with its duration in ms. */
async function rawDialogue(port: number, to: string): Promise<number> {
  const started = performance.now();
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let buffer = '';
  const waiters: Array<() => void> = [];
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (const wake of waiters.splice(0)) wake();
  });
  const reply = async (): Promise<string> => {
    for (;;) {
      const match = /^(?:\d{3}-[^\r\n]*\r\n)*(\d{3})(?: [^\r\n]*)?\r\n/.exec(buffer);
      if (match) {
        buffer = buffer.slice(match[0].length);
        return match[1]!;
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const expectCode = async (code: string, after: string) => {
    const got = await reply();
    if (got !== code) throw new Error(`SMTP: expected ${code} after ${after}, got ${got}`);
  };
  try {
    await expectCode('220', 'connect');
    for (const [line, code] of [
      ['EHLO bench.example', '250'],
      ['MAIL FROM:<bench@acme.example>', '250'],
      [`RCPT TO:<${to}>`, '250'],
      ['DATA', '354'],
      ['From: bench@acme.example\r\nSubject: Raw\r\n\r\nhello\r\n.', '250'],
      ['QUIT', '221'],
    ] as const) {
      socket.write(`${line}\r\n`);
      await expectCode(code, line.split('\r\n')[0]!);
    }
    return performance.now() - started;
  } finally {
    socket.destroy();
  }
}

async function sendToMailInHand(server: ServerProcess, serverWait: boolean): Promise<number> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    const inbox = await createInbox({ backend: BACKEND, apiURL: server.apiURL, prefix: 'bench-send', serverWait });
    const waiting = inbox.expectMail({ subject: 'Confirm' }, { timeout: 10_000 });
    // Let the wait settle into its hold (or its sleep) before the app sends.
    await sleep(300);
    const started = performance.now();
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to: inbox.address, subject: 'Confirm your email', text: 'Your code is 123456' });
    await waiting;
    return performance.now() - started;
  } finally {
    transport.close();
  }
}

async function alreadyThere(server: ServerProcess): Promise<number> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
  try {
    const createdAt = performance.now();
    const inbox = await createInbox({ backend: BACKEND, apiURL: server.apiURL, prefix: 'bench-there' });
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to: inbox.address, subject: 'Confirm your email', text: 'Your code is 123456' });
    await sleep(Math.max(0, createdAt + 200 - performance.now()));
    const started = performance.now();
    await inbox.expectMail({ subject: 'Confirm' });
    return performance.now() - started;
  } finally {
    transport.close();
  }
}

async function samples(take: () => Promise<number>): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await take();
  const values: number[] = [];
  for (let i = 0; i < SAMPLES; i++) values.push(await take());
  return values;
}

export const perTestBench: BenchSection = {
  name: 'per-test',
  description: 'the per-test path: raw SMTP dialogue, sendMail to mail in hand, mail already there right after setup',
  async run() {
    if (BACKEND === 'mailpit') throw new Error('BENCH_BACKEND=mailpit: Mailpit cannot run here; the per-test bench runs on mailroom (default) or maildev');
    const server = BACKEND === 'maildev' ? await startMaildevProcess() : await startServerProcess();
    const sendGoalMs = BACKEND === 'maildev' ? 150 : 25;
    try {
      const format = formatMs(1);
      const where = BACKEND === 'maildev' ? 'maildev 3 in its own process (backend: maildev)' : 'Embedded server in its own process';
      console.log(`${where}; ${SAMPLES} samples each after ${WARMUP} warm-up, one at a time, each on a fresh address.`);

      const raw = await samples(() => rawDialogue(server.smtpPort, `raw-${Math.random().toString(36).slice(2)}@mailroom.test`));
      console.log(`\n1. Raw SMTP dialogue of one message over a new connection (connect … QUIT): ${describe(raw, format, [50, 90])}`);
      if (BACKEND === 'mailroom') console.log(`   goal p50 <= 10 ms: ${verdict(percentile(raw, 50) <= 10)}`);
      else console.log(`   (maildev's own SMTP: part of every sample below, and no goal of mailroom's)`);

      const waited = await samples(() => sendToMailInHand(server, true));
      const polled = await samples(() => sendToMailInHand(server, false));
      console.log(`\n2. nodemailer sendMail() over a new connection to expectMail() resolved, the wait already running:`);
      console.log(`   ${BACKEND === 'maildev' ? 'push stream (default)' : 'server wait (default)'}: ${describe(waited, format, [50, 90])}`);
      console.log(`   polling (serverWait: false), for the record: ${describe(polled, format, [50, 90])}`);
      console.log(`   goal p50 <= ${sendGoalMs} ms (${BACKEND === 'maildev' ? 'push' : 'server wait'}): ${verdict(percentile(waited, 50) <= sendGoalMs)}`);

      const there = await samples(() => alreadyThere(server));
      console.log(`\n3. Mail already there 200 ms after createInbox, expectMail() from call to return: ${describe(there, format, [50, 90])}`);
      if (BACKEND === 'mailroom') console.log(`   goal p50 <= 20 ms: ${verdict(percentile(there, 50) <= 20)}`);
    } finally {
      await server.stop();
    }
  },
};
