// Mail that is broken in the ways real senders break it: accepted, listed and
// fetched with sensible values, never a crash or a 500.
import { describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, listPath, messagePath, sendRaw, start } from './helpers.js';

/** Delivers `source` over a raw dialogue, then reads the summary and the full message. */
async function roundTrip(server: MailroomServer, source: string | Buffer) {
  const address = freshAddress('bad');
  const reply = await sendRaw(server.smtpPort, 'sender@example.com', [address], source);
  expect(reply).toMatch(/^250 /);
  const list = await call(server, listPath(address));
  expect(list.status).toBe(200);
  expect(list.json.messages).toHaveLength(1);
  const summary = list.json.messages[0];
  const full = await call(server, messagePath(summary.id, address));
  expect(full.status).toBe(200);
  const raw = await call(server, messagePath(summary.id, address, '/raw'));
  expect(raw.status).toBe(200);
  return { summary, message: full.json, raw: raw.body };
}

describe('bad mail', () => {
  it('keeps 8-bit Latin-1 headers readable and the raw bytes untouched', async () => {
    const server = await start();
    const source = Buffer.from(
      'From: "Jos\xe9" <jose@example.com>\r\nTo: x@mailroom.test\r\nSubject: Caf\xe9 cr\xe8me\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\nOl\xe1 mundo\r\n',
      'latin1',
    );
    const { summary, message, raw } = await roundTrip(server, source);
    expect(summary.subject).toBe('Café crème');
    expect(summary.from).toBe('José <jose@example.com>');
    expect(message.text.trim()).toBe('Olá mundo');
    expect(raw.equals(source)).toBe(true);
  });

  it('reads raw UTF-8 headers and RFC 2047 encoded words in other charsets', async () => {
    const server = await start();
    const source = Buffer.concat([
      Buffer.from('Subject: Grüße 日本 ', 'utf8'),
      Buffer.from('=?ISO-8859-1?Q?caf=E9?=\r\nFrom: =?UTF-8?B?w4lsb2TDqWU=?= <e@example.com>\r\n\r\nbody\r\n'),
    ]);
    const { summary } = await roundTrip(server, source);
    expect(summary.subject).toBe('Grüße 日本 café');
    expect(summary.from).toBe('Élodée <e@example.com>');
  });

  it('copes with a message without Subject, From or To', async () => {
    const server = await start();
    const { summary, message } = await roundTrip(server, 'X-Only: header\r\n\r\nJust a body.\r\n');
    expect(summary).toMatchObject({ subject: '', from: '', to: [], preview: 'Just a body.' });
    expect(message).toMatchObject({ cc: [], message_id: null, date: null, html: null, attachments: [] });
  });

  it('copes with a message that has no header block at all, or no body', async () => {
    const server = await start();
    expect((await roundTrip(server, 'no headers here, only words\r\nand more words\r\n')).summary.subject).toBe('');
    const headersOnly = await roundTrip(server, 'Subject: headers only\r\n');
    expect(headersOnly.summary.subject).toBe('headers only');
    expect(headersOnly.summary.preview).toBe('');
  });

  it('copes with malformed MIME: lost boundaries, bad base64, unknown charsets, bad dates', async () => {
    const server = await start({ listPerSecond: Infinity });
    const lostBoundary = [
      'Subject: lost boundary',
      'Date: not a date at all',
      'Content-Type: multipart/mixed; boundary="abc"',
      '',
      '--abc',
      'Content-Type: text/plain',
      '',
      'first part',
      '--abc',
      'Content-Type: text/html; charset=x-no-such-charset',
      'Content-Transfer-Encoding: base64',
      '',
      '!!!not base64@@@',
      '--zzz--',
      '',
    ].join('\r\n');
    const { summary, message } = await roundTrip(server, lostBoundary);
    expect(summary.subject).toBe('lost boundary');
    expect(message.date).toBeNull();
    expect(message.text).toContain('first part');

    const noBoundary = await roundTrip(server, 'Subject: no boundary param\r\nContent-Type: multipart/alternative\r\n\r\nstray text\r\n');
    expect(noBoundary.summary.subject).toBe('no boundary param');
    const badType = await roundTrip(
      server,
      'Subject: bad type\r\nContent-Type: ;;;===\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ=\r\nbroken =3D qp\r\n',
    );
    expect(badType.summary.subject).toBe('bad type');
  });

  it('copes with NUL bytes and binary garbage', async () => {
    const server = await start();
    const garbage = Buffer.alloc(4096);
    for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 131 + 7) % 256;
    const source = Buffer.concat([Buffer.from('Subject: binary\0stuff\r\n\r\n'), garbage.filter((b) => b !== 0x0a && b !== 0x0d && b !== 0x2e)]);
    const { summary } = await roundTrip(server, source);
    expect(typeof summary.subject).toBe('string');
    expect(summary.size).toBeGreaterThan(3000);
  });

  it("copes with huge headers, past the MIME parser's own 2 MiB header limit", async () => {
    const server = await start({ maxMessageBytes: 8 * 1024 * 1024 });
    const folded = (kb: number) => `X-Huge: start\r\n${` ${'h'.repeat(98)}\r\n`.repeat(kb * 10)}`;
    const big = await roundTrip(server, `Subject: one MiB of header\r\n${folded(1024)}\r\nbody after a huge header\r\n`);
    expect(big.summary.subject).toBe('one MiB of header');
    expect(big.message.text).toContain('body after a huge header');
    const bigger = await roundTrip(server, `Subject: three MiB of header\r\nFrom: big@example.com\r\n${folded(3 * 1024)}\r\nstill readable\r\n`);
    expect(bigger.summary.subject).toBe('three MiB of header');
    expect(bigger.summary.from).toBe('big@example.com');
    expect(bigger.message.text).toContain('still readable');
  });

  it('uses the visible text of HTML-only mail for the preview', async () => {
    const server = await start();
    const { summary, message } = await roundTrip(
      server,
      'Subject: html only\r\nContent-Type: text/html\r\n\r\n<html><head><style>p{color:red}</style></head><body><p>Hello&nbsp;<b>there</b></p><script>ignore()</script></body></html>\r\n',
    );
    expect(summary.preview).toBe('Hello there');
    expect(message.html).toContain('<b>there</b>');
  });
});
