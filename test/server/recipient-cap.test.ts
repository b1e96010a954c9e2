// Issue 26, item 4: recipients per SMTP transaction are capped
// (`maxRecipients`, default 1,000, at least RFC 5321's 100); past the cap
// each RCPT is answered `452 4.5.3`, and the mail goes to the ones taken.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';
import { call, listPath, SmtpDialogue, start } from './helpers.js';

/** Pipelines MAIL FROM, one RCPT per address and DATA with a short mail on one socket; every final reply line, in order. */
async function pipelined(port: number, recipients: readonly string[]): Promise<string[]> {
  const socket = connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  const finals: string[] = [];
  let partial = '';
  const expected = 2 + 1 + recipients.length + 2 + 1; // greeting, EHLO, MAIL, RCPTs, DATA, end of data, QUIT
  const done = new Promise<void>((resolve, reject) => {
    socket.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\r\n');
      partial = lines.pop()!;
      for (const line of lines) if (/^\d{3} /.test(line)) finals.push(line);
      if (finals.length >= expected) resolve();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
  const commands = ['EHLO test.example', 'MAIL FROM:<app@example.com>', ...recipients.map((to) => `RCPT TO:<${to}>`), 'DATA'];
  socket.write(commands.map((c) => `${c}\r\n`).join(''));
  socket.write('Subject: many\r\n\r\nhello\r\n.\r\nQUIT\r\n');
  await done;
  socket.destroy();
  return finals.slice(3, 3 + recipients.length);
}

describe('recipients per transaction', () => {
  it('are taken up to maxRecipients; the rest are answered 452 4.5.3 and the mail reaches only the taken ones', async () => {
    const server = await start({ maxRecipients: 100, listPerSecond: Infinity });
    const tag = Math.random().toString(36).slice(2, 8);
    const to = Array.from({ length: 103 }, (_, i) => `cap-${tag}-${i}@mailroom.test`);
    const { dialogue } = await SmtpDialogue.open(server.smtpPort);
    await dialogue.send('EHLO test.example');
    await dialogue.send('MAIL FROM:<app@example.com>');
    const replies: string[] = [];
    for (const rcpt of to) replies.push(await dialogue.send(`RCPT TO:<${rcpt}>`));
    // A repeat of one already taken is taken again, even at the cap (it replaces the earlier entry).
    expect(await dialogue.send(`RCPT TO:<${to[0]!.toUpperCase()}>`)).toMatch(/^250 /);
    expect(await dialogue.send('DATA')).toMatch(/^354/);
    dialogue.write('Subject: capped\r\n\r\nhi\r\n.\r\n');
    expect(await dialogue.reply()).toBe('250 2.6.0 Stored for 100 mailboxes');
    // The next transaction on the same connection starts with none taken.
    await dialogue.send('MAIL FROM:<app@example.com>');
    expect(await dialogue.send(`RCPT TO:<${to[102]}>`)).toMatch(/^250 /);
    dialogue.close();

    expect(replies.slice(0, 100).every((reply) => reply.startsWith('250 '))).toBe(true);
    expect(replies.slice(100)).toEqual(Array(3).fill('452 4.5.3 Too many recipients: at most 100 per transaction; send to the rest in another transaction'));
    expect((await call(server, listPath(to[99]!))).json.messages).toHaveLength(1);
    expect((await call(server, listPath(to[100]!))).json.messages).toHaveLength(0);
  });

  it(
    '5,000 in one pipelined transaction: 1,000 taken by default, 4,000 answered 452 4.5.3, each RCPT answered once',
    { timeout: HEAVY_TEST_TIMEOUT_MS },
    async () => {
      const server = await start();
      const tag = Math.random().toString(36).slice(2, 8);
      const replies = await pipelined(
        server.smtpPort,
        Array.from({ length: 5000 }, (_, i) => `burst-${tag}-${i}@mailroom.test`),
      );
      expect(replies).toHaveLength(5000);
      expect(replies.filter((reply) => reply.startsWith('250 ')).length).toBe(1000);
      expect(replies.slice(1000).every((reply) => reply.startsWith('452 4.5.3 '))).toBe(true);
    },
  );

  it('cannot be capped below the 100 RFC 5321 asks for', () => {
    expect(() => resolveServerOptions({ maxRecipients: 99 })).toThrow(/maxRecipients.*at least 100/);
    expect(resolveServerOptions({}).maxRecipients).toBe(1000);
  });
});
