// Resource bounds (issue 11, item 4): SMTP connection and command limits with
// clear replies, slow HTTP clients cut off, and a normal client that still
// sends and waits while 500 idle SMTP connections and 500 slowloris HTTP
// clients hold the server.
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createInbox } from '../../src/index.js';
import type { MailroomServer } from '../../src/server/index.js';
import { parseAnswer } from '../support/fuzz/raw-http.js';
import { freshAddress, sendMail, SmtpDialogue, start } from './helpers.js';

function opened(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Everything the server sends until it closes the connection. */
function untilClosed(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  return new Promise((resolve) => socket.once('close', () => resolve(text)));
}

describe('SMTP limits', () => {
  it('answers the connection past maxSmtpConnections with 421 4.4.5 and closes it; a freed slot is taken again', async () => {
    const server = await start({ maxSmtpConnections: 3 });
    const held = await Promise.all([1, 2, 3].map(() => SmtpDialogue.open(server.smtpPort)));
    for (const { greeting } of held) expect(greeting).toMatch(/^220 /);
    const extra = await opened(server.smtpPort);
    expect(await untilClosed(extra)).toBe('421 4.4.5 mailroom Too many connected clients, try again in a moment\r\n');
    held[0]!.dialogue.close();
    await new Promise((resolve) => held[0]!.dialogue.socket.once('close', resolve));
    const again = await SmtpDialogue.open(server.smtpPort);
    expect(again.greeting).toMatch(/^220 /);
    for (const d of [again, ...held]) d.dialogue.close();
  });

  it('closes a connection after 10 unrecognised commands with 421 4.7.0, each before it 500 5.5.2', async () => {
    const server = await start();
    const { dialogue } = await SmtpDialogue.open(server.smtpPort);
    const replies: string[] = [];
    for (let i = 0; i < 10; i++) replies.push(await dialogue.send(`BOGUS${i}`));
    expect(replies.slice(0, 9)).toEqual(Array(9).fill('500 5.5.2 Error: command not recognized'));
    expect(replies[9]).toBe('421 4.7.0 Error: too many unrecognized commands');
    await new Promise((resolve) => (dialogue.closed ? resolve(undefined) : dialogue.socket.once('close', resolve)));
    expect(dialogue.closed).toBe(true);
  });

  it('closes a silent connection with 421 4.4.2 after smtpIdleTimeout', async () => {
    const server = await start({ smtpIdleTimeout: 200 });
    const socket = await opened(server.smtpPort);
    expect(await untilClosed(socket)).toMatch(/^220 [^\r]*\r\n421 4\.4\.2 Timeout - closing connection\r\n$/);
  });
});

describe('slow HTTP clients', () => {
  it('answers a client that dribbles its headers past httpHeadersTimeout with 408 request_timeout and cuts it off', async () => {
    const server = await start({ httpHeadersTimeout: 400, httpRequestTimeout: 400 });
    const socket = await opened(server.httpPort);
    const answer = untilClosed(socket);
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const dribble = setInterval(() => socket.writable && socket.write('X-Slow: y\r\n'), 50);
    const text = await answer;
    clearInterval(dribble);
    const parsed = parseAnswer(Buffer.from(text, 'latin1'), false);
    expect(parsed?.status).toBe(408);
    expect(JSON.parse(parsed!.body.toString('utf8'))).toMatchObject({ error: 'request_timeout' });
    expect(parsed?.headers['x-content-type-options']).toEqual(['nosniff']);
  });
});

describe('under load from idle and slow clients', () => {
  async function holdOpen(server: MailroomServer, count: number) {
    const smtp = await Promise.all(Array.from({ length: count }, () => opened(server.smtpPort)));
    const http = await Promise.all(Array.from({ length: count }, () => opened(server.httpPort)));
    for (const socket of [...smtp, ...http]) socket.on('error', () => {});
    // slowloris: a request head that never ends, one more header line now and then
    for (const socket of http) socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const dribble = setInterval(() => {
      for (const socket of http) if (socket.writable) socket.write('X-Slow: y\r\n');
    }, 500);
    return {
      smtp,
      http,
      release() {
        clearInterval(dribble);
        for (const socket of [...smtp, ...http]) socket.destroy();
      },
    };
  }

  it('lets a normal client send and wait while 500 idle SMTP connections and 500 slowloris HTTP clients are held', async () => {
    const server = await start({ listPerSecond: Infinity });
    const held = await holdOpen(server, 500);
    try {
      const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0] });
      const waiting = inbox.expectMail({ subject: 'through the crowd' }, { timeout: 15_000 });
      await sendMail(server, { to: inbox.address, subject: 'through the crowd', text: 'made it' });
      const mail = await waiting;
      expect(mail.text).toContain('made it');
      // the crowd was still there the whole time: nothing was cut to make room
      expect(held.smtp.filter((s) => s.destroyed || s.readableEnded)).toEqual([]);
      expect(held.http.filter((s) => s.destroyed || s.readableEnded)).toEqual([]);
      // and another sender still gets in
      await sendMail(server, { to: freshAddress(), subject: 'one more', text: 'x' });
    } finally {
      held.release();
    }
  });
});
