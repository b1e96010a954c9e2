// A mailroom server in its own process, its store filled directly (the same
// deliver() that SMTP intake calls) with many messages, so the list benchmark
// can measure listing over real HTTP without first spending minutes on SMTP.
import { startServer } from '../src/server/index.js';
import { internalsOf } from '../src/server/start-server.js';

const [messages = '100000', addresses = '10000', hotMessages = '10000', store = 'memory'] = process.argv.slice(2);
const server = await startServer({ smtpPort: 0, httpPort: 0, maxMessages: Infinity, store, logger: { info() {}, warn: console.error, error: console.error } });
const mail = internalsOf(server).store;

function source(i: number, to: string): Buffer {
  return Buffer.from(
    [
      'From: Acme <noreply@acme.example>',
      `To: ${to}`,
      `Subject: Your code ${String(i).padStart(6, '0')}`,
      `Message-ID: <${i}.bench@acme.example>`,
      'Date: Sun, 01 Jan 2030 00:00:00 +0000',
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello,\r\n\r\nYour sign-in code is ${100000 + (i % 900000)}. It expires in 10 minutes.\r\nIf you did not ask for it, ignore this message.`,
      '--b',
      'Content-Type: text/html; charset=utf-8',
      '',
      `<p>Hello,</p><p>Your sign-in code is <b>${100000 + (i % 900000)}</b>. It expires in 10 minutes.</p>`,
      '--b--',
      '',
    ].join('\r\n'),
  );
}

const total = Number(messages);
const spread = Number(addresses);
for (let i = 0; i < total; i++) {
  const to = `user-${i % spread}@mailroom.test`;
  await mail.deliver([to], source(i, to), 'noreply@acme.example');
}
// One hot mailbox, to show that listing costs O(limit), not O(mailbox size).
for (let i = 0; i < Number(hotMessages); i++) await mail.deliver(['hot@mailroom.test'], source(i, 'hot@mailroom.test'), 'noreply@acme.example');
console.log(`filled ${await mail.count()} messages; HTTP ${server.apiURL}`);
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
