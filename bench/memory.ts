// Memory of `mailroom serve` under load (issue 26): the resident set of the
// server process after a run of mail, read from /proc (Linux).
//
//   npx tsx bench/memory.ts big        5,000 mails of 1 MB, with one webhook to a receiver that always answers 500
//   npx tsx bench/memory.ts big-plain  the same without the webhook
//   npx tsx bench/memory.ts small      100,000 small mails, the byte cap at its default
//
// Runs dist/ (`npm run build` first); MAILROOM_BENCH_CLI=path/to/cli/index.js runs another build,
// MAILROOM_BENCH_COUNT=n sends n mails instead.
// Prints VmRSS after the run and after the store settles (5 s), and VmHWM (the peak).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { freePort, startChild } from './support.js';

const scenario = process.argv[2] ?? 'big';
const cli = process.env.MAILROOM_BENCH_CLI ?? 'dist/cli/index.js';

function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(500).end('no'));
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const smtpPort = await freePort();
const httpPort = await freePort();
const args = ['serve', '--smtp-port', String(smtpPort), '--http-port', String(httpPort)];
if (scenario === 'big') args.push('--webhook', hook, '--webhook-secret', 'bench');
const server = startChild(process.execPath, [cli, ...args]);
try {
  for (let i = 0; ; i++) {
    if (
      await fetch(`http://127.0.0.1:${httpPort}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 100) throw new Error(`the server did not start:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = server.child.pid!;
  const count = Number(process.env.MAILROOM_BENCH_COUNT ?? (scenario === 'small' ? 100_000 : 5_000));
  const text = scenario === 'small' ? 'a short mail\n' : `${'x'.repeat(1023)}\n`.repeat(1024);
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: smtpPort,
    secure: false,
    ignoreTLS: true,
    pool: true,
    maxConnections: 4,
    maxMessages: Infinity,
  });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      await transport.sendMail({ from: 'bench@example.com', to: `box-${i % 200}@mailroom.test`, subject: `mail ${i}`, text });
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  transport.close();
  const sent = performance.now() - started;
  const after = memoryOf(pid);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const settled = memoryOf(pid);
  console.log(
    `${scenario}: ${count} mails in ${(sent / 1000).toFixed(1)} s; RSS after the run ${mib(after.rss)}, 5 s later ${mib(settled.rss)}, peak ${mib(settled.peak)} (${cli})`,
  );
} finally {
  await server.stop();
  receiver.close();
}
