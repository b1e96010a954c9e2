// SMTP intake through real sockets: raw dialogues for exact replies, nodemailer
// for what applications actually send.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { describe, expect, it, vi } from 'vitest';
import { call, freshAddress, listPath, sendMail, sendRaw, SmtpDialogue, start } from './helpers.js';

async function ready(port: number) {
  const { dialogue, greeting } = await SmtpDialogue.open(port);
  const ehlo = await dialogue.send('EHLO client.example');
  return { dialogue, greeting, ehlo };
}

describe('SMTP dialogue', () => {
  it('greets, advertises SIZE with the limit and AUTH, and offers no STARTTLS', async () => {
    const server = await start({ maxMessageBytes: 4096 });
    const { dialogue, greeting, ehlo } = await ready(server.smtpPort);
    expect(greeting).toMatch(/^220 /);
    expect(ehlo).toMatch(/^250[- ]SIZE 4096$/m);
    expect(ehlo).toMatch(/^250[- ]AUTH PLAIN LOGIN CRAM-MD5 XOAUTH2$/m);
    expect(ehlo).not.toContain('STARTTLS');
    dialogue.close();
  });

  it('greets without a timer: the 220 comes while timers stand still (stock smtp-server holds it on a 100 ms one)', async () => {
    // smtp-server 3.21.6 holds every connection on a 100 ms setTimeout before
    // its 220 (src/server/smtp/smtp-server-private.ts takes that out). With
    // setTimeout frozen, stock never greets and ours still does, on any
    // machine; how fast the greeting is, is bench/per-test.ts's to measure.
    const server = await start();
    const realSetTimeout = globalThis.setTimeout;
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const greeted = SmtpDialogue.open(server.smtpPort);
      let bound: ReturnType<typeof setTimeout> | undefined;
      const frozen = new Promise<never>((_, reject) => {
        bound = realSetTimeout(() => reject(new Error('no 220 while setTimeout stood still: the greeting waits for a timer')), 5_000);
      });
      const { dialogue, greeting } = await Promise.race([greeted, frozen]).finally(() => clearTimeout(bound));
      expect(greeting).toMatch(/^220 /);
      dialogue.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('still takes the first command right after the greeting: no "421 You talk too soon"', async () => {
    const server = await start();
    const socket = await new Promise<import('node:net').Socket>((resolve, reject) => {
      const s = connect(server.smtpPort, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    // EHLO written the moment the socket connects, before the 220 is read.
    socket.write('EHLO early.example\r\n');
    let text = '';
    socket.setEncoding('latin1');
    await new Promise<void>((resolve) => socket.on('data', (chunk: string) => ((text += chunk), /^250 /m.test(text) || /^421/m.test(text)) && resolve()));
    socket.destroy();
    expect(text).toMatch(/^220 /);
    expect(text).toMatch(/^250 /m);
    expect(text).not.toMatch(/^421/m);
  });

  it('answers 250 only once the message is visible to the API', async () => {
    const server = await start();
    const address = freshAddress();
    const { dialogue } = await ready(server.smtpPort);
    expect(await dialogue.send('MAIL FROM:<sender@example.com>')).toMatch(/^250/);
    expect(await dialogue.send(`RCPT TO:<${address}>`)).toMatch(/^250/);
    expect(await dialogue.send('DATA')).toMatch(/^354/);
    const done = await dialogue.send('From: sender@example.com\r\nSubject: Visible\r\n\r\nbody\r\n.');
    expect(done).toMatch(/^250 2\.6\.0 Stored as [0-9a-z]{11} for /);
    // no wait, no retry: the list right after the 250 has it
    const listed = await call(server, listPath(address));
    expect(listed.json.messages.map((m: { subject: string }) => m.subject)).toEqual(['Visible']);
    expect(done).toContain(listed.json.messages[0].id);
    dialogue.close();
  });

  it('refuses an unknown domain with 550 5.1.2 (catchAll off) and a malformed address with 553 5.1.3, keeping the good recipients', async () => {
    const server = await start({ listPerSecond: Infinity, catchAll: false });
    const good = freshAddress();
    const { dialogue } = await ready(server.smtpPort);
    await dialogue.send('MAIL FROM:<sender@example.com>');
    const unknown = await dialogue.send('RCPT TO:<someone@elsewhere.example>');
    expect(unknown).toMatch(/^550 5\.1\.2 /);
    expect(unknown).toContain('elsewhere.example');
    for (const bad of ['no-at-sign', 'a@b@mailroom.test', 'a..b@mailroom.test', '.a@mailroom.test', '@mailroom.test', 'user@', 'user@-bad-.test', '']) {
      const reply = await dialogue.send(`RCPT TO:<${bad}>`);
      expect(reply, `RCPT TO:<${bad}>`).toMatch(/^553 5\.1\.3 /);
    }
    expect(await dialogue.send(`RCPT TO:<${good}>`)).toMatch(/^250/);
    expect(await dialogue.send('DATA')).toMatch(/^354/);
    expect(await dialogue.send('Subject: kept\r\n\r\nx\r\n.')).toMatch(/^250/);
    expect((await call(server, listPath(good))).json.messages).toHaveLength(1);
    dialogue.close();
  });

  it('refuses a declared SIZE over the limit with 552 5.3.4', async () => {
    const server = await start({ maxMessageBytes: 2048 });
    const { dialogue } = await ready(server.smtpPort);
    const reply = await dialogue.send('MAIL FROM:<sender@example.com> SIZE=5000');
    expect(reply).toMatch(/^552 5\.3\.4 /);
    expect(reply).toContain('2048');
    expect(await dialogue.send('MAIL FROM:<sender@example.com> SIZE=1000')).toMatch(/^250/);
    dialogue.close();
  });

  it('refuses DATA over the limit with 552 5.3.4, stores nothing, and keeps the connection usable', async () => {
    const server = await start({ maxMessageBytes: 2048 });
    const address = freshAddress();
    const { dialogue } = await ready(server.smtpPort);
    await dialogue.send('MAIL FROM:<sender@example.com>');
    await dialogue.send(`RCPT TO:<${address}>`);
    await dialogue.send('DATA');
    const tooBig = await dialogue.send(`Subject: big\r\n\r\n${'x'.repeat(70)}\r\n`.repeat(50) + '.');
    expect(tooBig).toMatch(/^552 5\.3\.4 /);
    expect((await call(server, listPath(address))).json.messages).toEqual([]);
    await dialogue.send('MAIL FROM:<sender@example.com>');
    await dialogue.send(`RCPT TO:<${address}>`);
    await dialogue.send('DATA');
    expect(await dialogue.send('Subject: small\r\n\r\nfits\r\n.')).toMatch(/^250/);
    dialogue.close();
  });

  it('accepts AUTH PLAIN and AUTH LOGIN with any credentials', async () => {
    const server = await start();
    const plain = await ready(server.smtpPort);
    const credentials = Buffer.from('\0anyone\0whatever').toString('base64');
    expect(await plain.dialogue.send(`AUTH PLAIN ${credentials}`)).toMatch(/^235/);
    plain.dialogue.close();

    const login = await ready(server.smtpPort);
    expect(await login.dialogue.send('AUTH LOGIN')).toMatch(/^334/);
    expect(await login.dialogue.send(Buffer.from('someone').toString('base64'))).toMatch(/^334/);
    expect(await login.dialogue.send(Buffer.from('wrong-but-fine').toString('base64'))).toMatch(/^235/);
    login.dialogue.close();
  });

  it('accepts mail from nodemailer with auth and without', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress();
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: server.smtpPort,
      secure: false,
      ignoreTLS: true,
      auth: { user: 'app', pass: 'secret' },
    });
    await transport.sendMail({ from: 'app@example.com', to: address, subject: 'With auth', text: 'x' });
    transport.close();
    await sendMail(server, { to: address, subject: 'Without auth', text: 'y' });
    const subjects = (await call(server, listPath(address))).json.messages.map((m: { subject: string }) => m.subject);
    expect(subjects).toEqual(['Without auth', 'With auth']);
  });

  it('accepts the domainless postmaster (RFC 5321) into postmaster@ the first domain', async () => {
    const server = await start({ domains: ['first.test', 'second.test'] });
    const reply = await sendRaw(server.smtpPort, 'sender@example.com', ['postmaster'], 'Subject: hi postmaster\r\n\r\nx\r\n');
    expect(reply).toMatch(/^250/);
    expect((await call(server, listPath('postmaster@first.test'))).json.messages).toHaveLength(1);
  });
});

describe('pipelining', () => {
  // Found by the SMTP fuzzer (seed 113): with MAIL FROM and RCPT TO answered in
  // the same tick, smtp-server stored both messages and then read no further
  // command, so the QUIT below hung.
  it('takes two whole transactions and QUIT in one write, or QUIT after them, and answers each', async () => {
    const server = await start({ listPerSecond: Infinity });
    const [a, b] = [freshAddress('pipe'), freshAddress('pipe')];
    const transaction = (to: string, subject: string) => `MAIL FROM:<s@example.com>\r\nRCPT TO:<${to}>\r\nDATA\r\nSubject: ${subject}\r\n\r\nx\r\n.\r\n`;
    for (const quitApart of [false, true]) {
      const { dialogue } = await SmtpDialogue.open(server.smtpPort);
      dialogue.write(`EHLO pipe.example\r\n${transaction(a, 'one')}${transaction(b, 'two')}${quitApart ? '' : 'QUIT\r\n'}`);
      const replies: string[] = [];
      for (let i = 0; i < 9; i++) replies.push(await dialogue.reply());
      if (quitApart) dialogue.write('QUIT\r\n');
      replies.push(await dialogue.reply());
      dialogue.close();
      expect(replies.map((r) => r.slice(0, 3))).toEqual(['250', '250', '250', '354', '250', '250', '250', '354', '250', '221']);
      expect(replies.filter((r) => /^250 2\.6\.0 Stored as /.test(r))).toHaveLength(2);
    }
    expect((await call(server, listPath(a))).json.messages.map((m: { subject: string }) => m.subject)).toEqual(['one', 'one']);
    expect((await call(server, listPath(b))).json.messages.map((m: { subject: string }) => m.subject)).toEqual(['two', 'two']);
  });
});

describe('recipients', () => {
  it('stores one copy per recipient mailbox: To, Cc and Bcc alike', async () => {
    const server = await start();
    const [to, cc, bcc] = [freshAddress('to'), freshAddress('cc'), freshAddress('bcc')];
    await sendMail(server, { to, cc, bcc, subject: 'Three copies', text: 'x' });
    const ids = new Set<string>();
    for (const address of [to, cc, bcc]) {
      const { messages } = (await call(server, listPath(address))).json;
      expect(messages).toHaveLength(1);
      expect(messages[0].subject).toBe('Three copies');
      // the Bcc'd copy lands too, and its To header still names the To recipient
      expect(messages[0].to).toEqual([to]);
      ids.add(messages[0].id);
    }
    expect(ids.size).toBe(3);
  });

  it('treats mailbox keys case-insensitively: one copy for two spellings, found by either', async () => {
    const server = await start({ listPerSecond: Infinity });
    const address = freshAddress('Mixed');
    const upper = address.toUpperCase();
    const reply = await sendRaw(server.smtpPort, 'sender@example.com', [address, upper], 'Subject: once\r\n\r\nx\r\n');
    expect(reply).toMatch(/^250 2\.6\.0 Stored as /);
    const viaLower = (await call(server, listPath(address.toLowerCase()))).json;
    const viaUpper = (await call(server, listPath(upper))).json;
    expect(viaLower.messages).toHaveLength(1);
    expect(viaUpper.messages.map((m: { id: string }) => m.id)).toEqual(viaLower.messages.map((m: { id: string }) => m.id));
    expect(viaUpper.address).toBe(upper);
  });

  it('handles 1,000 recipients in one transaction', async () => {
    const server = await start();
    const recipients = Array.from({ length: 1000 }, (_, i) => `bulk-${i}-${process.pid}@mailroom.test`);
    const reply = await sendRaw(server.smtpPort, 'sender@example.com', recipients, 'Subject: to everyone\r\n\r\nhello all\r\n');
    expect(reply).toMatch(/^250 2\.6\.0 Stored for 1000 mailboxes/);
    for (const address of [recipients[0]!, recipients[499]!, recipients[999]!]) {
      const { messages } = (await call(server, listPath(address))).json;
      expect(messages).toHaveLength(1);
      expect(messages[0].subject).toBe('to everyone');
    }
  });
});
