// The fast summary path must agree with the full MIME parse wherever it
// answers, and must answer for the shapes application mail usually has.
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { parseMail, summarize } from '../../src/server/store/mime-parse.js';
import { fastSummary } from '../../src/server/store/fast-summary.js';

const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

async function compose(mail: SendMailOptions): Promise<Buffer> {
  const info = await composer.sendMail({ from: 'Acme Support <support@acme.example>', to: 'user@mailroom.test', ...mail });
  return info.message as Buffer;
}

const LONG = `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8)}Your code is 482913.`;

const common: Record<string, SendMailOptions> = {
  'short text': { subject: 'Hi', text: 'Your code is 123456' },
  'long text': { subject: 'Long', text: LONG },
  'unicode text and subject': { subject: 'Grüße 日本 🎉', text: `Olá, ${'ação '.repeat(40)} 🎉 código 998877` },
  'text and html': { subject: 'Both', text: LONG, html: `<p>${LONG}</p>` },
  'text with attachment': { subject: 'Attached', text: 'See the file.', attachments: [{ filename: 'a.txt', content: 'file body' }] },
  'text, html and attachment': { subject: 'All', text: LONG, html: '<b>x</b>', attachments: [{ filename: 'b.pdf', content: Buffer.alloc(2000, 7) }] },
  'display names with commas and several recipients': {
    from: '"Doe, Jane" <jane@example.com>',
    to: ['"A, B" <a@mailroom.test>', 'c@mailroom.test'],
    subject: 'Names',
    text: 'x',
  },
  'very long lines (quoted-printable)': { subject: 'QP', text: `${'é'.repeat(300)} and = signs = everywhere` },
};

const odd: Record<string, string | Buffer> = {
  'no content type': 'Subject: plain\r\nFrom: a@example.com\r\n\r\nJust text here.\r\n',
  'latin-1 headers and body': Buffer.from(
    'From: "Jos\xe9" <j@example.com>\r\nSubject: Caf\xe9\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\nOl\xe1 mundo\r\n',
    'latin1',
  ),
  'us-ascii label on UTF-8 bytes': Buffer.from(
    'Subject: label\r\nContent-Type: text/plain; charset=us-ascii\r\nContent-Transfer-Encoding: 8bit\r\n\r\nGrüße\r\n',
    'utf8',
  ),
  'html only': 'Subject: html\r\nContent-Type: text/html\r\n\r\n<p>Hello <b>there</b></p>\r\n',
  'flowed text': 'Subject: flowed\r\nContent-Type: text/plain; format=flowed; delsp=yes\r\n\r\nThis is a long line that is  \r\nflowed over two lines.\r\n',
  'folded headers': 'Subject: one\r\n  two\r\n\tthree\r\nTo: a@mailroom.test,\r\n b@mailroom.test\r\nTo: c@mailroom.test\r\n\r\nbody\r\n',
  'group address': 'From: Team: x@example.com, y@example.com;\r\nTo: undisclosed-recipients:;\r\nSubject: group\r\n\r\nbody\r\n',
  'broken boundary': 'Subject: broken\r\nContent-Type: multipart/mixed; boundary="abc"\r\n\r\n--abc\r\nContent-Type: text/plain\r\n\r\nfirst\r\n--zzz--\r\n',
  'stray equals in qp': 'Subject: qp\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ broken =3D qp\r\n',
  'bad base64': 'Subject: b64\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!notbase64@@@\r\n',
  'mixed with two text parts':
    'Subject: two\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nshort one\r\n--b\r\nContent-Type: text/plain\r\n\r\nsecond part text\r\n--b--\r\n',
  'encoded words': 'Subject: =?ISO-8859-1?Q?caf=E9?= =?UTF-8?B?w6k=?=\r\nFrom: =?UTF-8?B?w4lsb2TDqWU=?= <e@example.com>\r\n\r\nbody\r\n',
  'empty body': 'Subject: empty\r\n\r\n',
  'headers only': 'Subject: nothing else\r\n',
};

/** The odd shapes the fast path leaves to the full parse; it answers for every other one. */
const DECLINED = new Set(['html only', 'flowed text', 'broken boundary', 'stray equals in qp', 'bad base64', 'mixed with two text parts', 'headers only']);
const rawOf = (source: string | Buffer) => (typeof source === 'string' ? Buffer.from(source, 'latin1') : source);

describe('fast summary', () => {
  it.each(Object.entries(common))('answers for common mail, like the full parse: %s', async (_name, mail) => {
    const raw = await compose(mail);
    const fast = fastSummary(raw);
    expect(fast).toBeDefined();
    expect(fast).toEqual(summarize(await parseMail(raw)));
  });

  it.each(Object.entries(odd).filter(([name]) => !DECLINED.has(name)))('answers for odd mail it can read, like the full parse: %s', async (_name, source) => {
    const raw = rawOf(source);
    const fast = fastSummary(raw);
    expect(fast).toBeDefined();
    expect(fast).toEqual(summarize(await parseMail(raw)));
  });

  it.each(Object.entries(odd).filter(([name]) => DECLINED.has(name)))('declines a shape it does not handle: %s', (_name, source) => {
    expect(fastSummary(rawOf(source))).toBeUndefined();
  });

  it('declines names only shapes the table has', () => {
    expect([...DECLINED].filter((name) => !(name in odd))).toEqual([]);
  });

  it('declines multipart/related (an inline image): the full parse reads it', async () => {
    const related = await compose({
      subject: 'inline image',
      html: '<img src="cid:logo">',
      text: 'x',
      attachments: [{ filename: 'l.png', content: Buffer.alloc(10), cid: 'logo' }],
    });
    expect(fastSummary(related)).toBeUndefined();
  });
});
