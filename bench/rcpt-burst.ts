// One SMTP transaction with many recipients (issue 26): how long the server
// takes to answer every RCPT, and what it answers. Runs `mailroom serve`
// (dist/, so `npm run build` first) on free ports, pipelines MAIL FROM, N
// RCPT TO and DATA on one socket, and prints the time from the first RCPT
// to the DATA reply and the reply codes counted.
//
//   npx tsx bench/rcpt-burst.ts [recipients=5000] [extra serve flags...]
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { freePort, startChild } from './support.js';

const recipients = Number(process.argv[2] ?? 5000);
const extra = process.argv.slice(3);
const smtpPort = await freePort();
const httpPort = await freePort();
const server = startChild(process.execPath, ['dist/cli/index.js', 'serve', '--smtp-port', String(smtpPort), '--http-port', String(httpPort), ...extra]);
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
  const socket = connect(smtpPort, '127.0.0.1');
  socket.setEncoding('latin1');
  // Final reply lines ("250 ...", not "250-..."), collected as they come: no rescans of the whole input.
  const finals: string[] = [];
  let partial = '';
  let wake = () => {};
  socket.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\r\n');
    partial = lines.pop()!;
    for (const line of lines) if (/^\d{3} /.test(line)) finals.push(line);
    wake();
  });
  const replyLines = (): string[] => finals;
  /** Resolves once `count` final reply lines have come. */
  const until = (count: number) =>
    new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      wake = () => {
        if (replyLines().length >= count) resolve();
      };
      wake();
    });
  await until(1); // greeting
  socket.write('EHLO bench\r\n');
  await until(2);
  const started = performance.now();
  const commands = ['MAIL FROM:<bench@example.com>'];
  for (let i = 0; i < recipients; i++) commands.push(`RCPT TO:<r${i}@mailroom.test>`);
  commands.push('DATA');
  socket.write(commands.map((c) => `${c}\r\n`).join(''));
  // MAIL, the RCPTs, then DATA's 354 (or 503 when none was taken).
  await until(2 + 1 + recipients + 1);
  const answered = performance.now() - started;
  socket.write('Subject: burst\r\n\r\nhello\r\n.\r\n');
  await until(2 + 1 + recipients + 2);
  const stored = performance.now() - started;
  socket.end('QUIT\r\n');
  const codes = new Map<string, number>();
  for (const line of replyLines().slice(3, 3 + recipients)) codes.set(line.slice(0, 9), (codes.get(line.slice(0, 9)) ?? 0) + 1);
  console.log(
    `${recipients} recipients in one transaction: every RCPT and DATA answered in ${answered.toFixed(0)} ms, the mail stored in ${stored.toFixed(0)} ms`,
  );
  console.log(`RCPT replies: ${[...codes].map(([code, n]) => `${n} x ${code.trim()}`).join(', ')}`);
  console.log(`end of DATA: ${replyLines().at(-1)}`);
} finally {
  await server.stop();
}
