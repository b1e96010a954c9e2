// The fast path to the full parse (store/fast-parse.ts) must give exactly
// what postal-mime's parse gives (store/mime-parse.ts) wherever it answers:
// over real mail (the corpus's MJML, React Email, Foundation, Maizzle,
// Cerberus and Markdown mails, composed by nodemailer as an app sends
// them), over odd hand-written shapes, and over a few hundred damaged
// copies of them. It must answer for what apps send and decline the shapes
// it leaves to the full parse.
import { readdirSync, readFileSync } from 'node:fs';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { describe, expect, it } from 'vitest';
import { fastParse } from '../../src/server/store/fast-parse.js';
import { makePreview, oneLine, parseMail, PREVIEW_LENGTH } from '../../src/server/store/mime-parse.js';

const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
const unixComposer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });

async function compose(mail: SendMailOptions, transport = composer): Promise<Buffer> {
  const info = await transport.sendMail({ from: 'Acme Support <support@acme.example>', to: 'user@mailroom.test', ...mail });
  return info.message as Buffer;
}

const CORPUS = new URL('../../fixtures/mail-corpus/mails/', import.meta.url);
/** Each corpus mail as its tool's HTML, with its text part where the tool made one. */
const corpus = readdirSync(CORPUS)
  .filter((name) => name.endsWith('.html'))
  .map((name) => {
    const html = readFileSync(new URL(name, CORPUS), 'utf8');
    const textFile = new URL(name.replace(/\.html$/, '.txt'), CORPUS);
    const text = readdirSync(CORPUS).includes(name.replace(/\.html$/, '.txt')) ? readFileSync(textFile, 'utf8') : undefined;
    return { name, mail: { subject: `Corpus: ${name}`, html, ...(text === undefined ? {} : { text }) } satisfies SendMailOptions };
  });

const LONG = `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8)}Your code is 482913.`;
const common: Record<string, SendMailOptions> = {
  'short text': { subject: 'Hi', text: 'Your code is 123456' },
  'html only': { subject: 'Html', html: `<p>${LONG}</p>` },
  'unicode text and subject': { subject: 'Grüße 日本 🎉', text: `Olá, ${'ação '.repeat(40)} 🎉 código 998877`, html: '<p>Olá 🎉</p>' },
  'text with attachment': { subject: 'Attached', text: 'See the file.', attachments: [{ filename: 'a.txt', content: 'file body' }] },
  'text, html and attachments': {
    subject: 'All',
    text: LONG,
    html: '<b>x</b>',
    attachments: [
      { filename: 'b.pdf', content: Buffer.alloc(2000, 7) },
      { filename: 'c.bin', content: Buffer.alloc(1, 1) },
      { filename: 'd.bin', content: Buffer.alloc(2, 2) },
    ],
  },
  'several recipients, cc, reply-to and headers': {
    from: '"Doe, Jane" <jane@example.com>',
    to: ['"A, B" <a@mailroom.test>', 'c@mailroom.test'],
    cc: 'Copy <copy@mailroom.test>',
    replyTo: 'reply@example.com',
    headers: { 'X-Campaign': 'spring', 'List-Unsubscribe': '<https://example.com/u>' },
    subject: 'Names',
    text: 'x',
  },
  'very long lines and = signs (quoted-printable)': {
    subject: 'QP',
    text: `${'é'.repeat(300)} and = signs = everywhere`,
    html: `<a href="x=1">${'ü'.repeat(200)}</a>`,
  },
  'base64 text': { subject: 'b64', text: '日本語のテキスト'.repeat(30), textEncoding: 'base64' },
  'inline image (multipart/related)': {
    subject: 'inline image',
    html: '<img src="cid:logo">',
    text: 'x',
    attachments: [{ filename: 'l.png', content: Buffer.alloc(10), cid: 'logo' }],
  },
};

const odd: Record<string, string> = {
  'no content type': 'Subject: plain\r\nFrom: a@example.com\r\n\r\nJust text here.\r\n',
  'bare LF and trailing CRs': 'Subject: lf\nTo: a@mailroom.test\n\nline one\r\r\nline two\n',
  'no final line break': 'Subject: eof\r\n\r\nlast line',
  'folded headers': 'Subject: one\r\n  two\r\n\tthree\r\nTo: a@mailroom.test,\r\n b@mailroom.test\r\nTo: c@mailroom.test\r\n\r\nbody\r\n',
  'group address': 'From: Team: x@example.com, y@example.com;\r\nTo: undisclosed-recipients:;\r\nSubject: group\r\n\r\nbody\r\n',
  'encoded words': 'Subject: =?ISO-8859-1?Q?caf=E9?= =?UTF-8?B?w6k=?=\r\nFrom: =?UTF-8?B?w4lsb2TDqWU=?= <e@example.com>\r\n\r\nbody\r\n',
  'invalid date and empty subject': 'Date: not a date\r\nSubject:\r\nSubject: second\r\n\r\nbody\r\n',
  'stray equals in qp': 'Subject: qp\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ broken =3D qp=3\r\nsoft=\r\nbreak=\r\n',
  'latin-1 body': 'Subject: l1\r\nContent-Type: text/plain; charset=ISO-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nOl\xe1\r\n',
  'boundary with = and trailing space, preamble and epilogue':
    'Subject: b\r\nContent-Type: multipart/alternative;\r\n boundary="----=_Part_1"\r\n\r\npreamble\r\n------=_Part_1  \r\nContent-Type: text/plain\r\n\r\nplain\r\n------=_Part_1\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n------=_Part_1--\r\nepilogue\r\n',
  'mixed with two text parts':
    'Subject: two\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nshort one\r\n--b\r\nContent-Type: text/plain\r\n\r\nsecond part text\r\n--b--\r\n',
  'empty body': 'Subject: empty\r\n\r\n',
};
const declined: Record<string, string> = {
  'headers only': 'Subject: nothing else\r\n',
  'non-ASCII header': 'Subject: Caf\xe9\r\n\r\nbody\r\n',
  'flowed text': 'Subject: flowed\r\nContent-Type: text/plain; format=flowed; delsp=yes\r\n\r\nThis is a long line that is  \r\nflowed over two lines.\r\n',
  'a comment in the content type': 'Subject: c\r\nContent-Type: text/plain (a comment); charset=utf-8\r\n\r\nbody\r\n',
  'RFC 2231 parameter': "Subject: c\r\nContent-Type: application/pdf; name*=utf-8''a%20b.pdf\r\n\r\nx\r\n",
  'unknown charset': 'Subject: c\r\nContent-Type: text/plain; charset=koi8-r\r\n\r\nbody\r\n',
  'unknown transfer encoding': 'Subject: c\r\nContent-Transfer-Encoding: x-uuencode\r\n\r\nbody\r\n',
  'bad base64': 'Subject: b64\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!notbase64@@@\r\n',
  'padding inside base64': 'Subject: b64\r\nContent-Transfer-Encoding: base64\r\n\r\naGk=\r\naGk=\r\n',
  'nested message': 'Subject: n\r\nContent-Type: message/rfc822\r\n\r\nSubject: inner\r\n\r\nhi\r\n',
  'multipart without a boundary': 'Subject: m\r\nContent-Type: multipart/mixed\r\n\r\nbody\r\n',
  'a part with no blank line': 'Subject: m\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n--b--\r\n',
  'text only in one entry of two':
    'Subject: m\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nplain\r\n--b\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n--b--\r\n',
  'calendar part':
    'Subject: m\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\nhi\r\n--b\r\nContent-Type: text/calendar; method=request\r\n\r\nBEGIN:VCALENDAR\r\n--b--\r\n',
};

async function expectSame(raw: Buffer): Promise<boolean> {
  const fast = fastParse(raw.toString('latin1'));
  if (fast !== undefined) expect(fast).toEqual(await parseMail(raw));
  return fast !== undefined;
}

describe('fast parse', () => {
  it('answers for every corpus mail, composed as an app sends it, exactly as the full parse does', async () => {
    expect(corpus.length).toBeGreaterThan(20);
    for (const { name, mail } of corpus) {
      for (const transport of [composer, unixComposer]) expect(await expectSame(await compose(mail, transport)), name).toBe(true);
    }
  });

  it.each(Object.entries(common))('answers for common mail exactly as the full parse does: %s', async (_name, mail) => {
    expect(await expectSame(await compose(mail))).toBe(true);
  });

  it.each(Object.entries(odd))('answers for an odd shape it can read, exactly as the full parse does: %s', async (_name, source) => {
    expect(await expectSame(Buffer.from(source, 'latin1'))).toBe(true);
  });

  it.each(Object.entries(declined))('declines a shape it leaves to the full parse: %s', (_name, source) => {
    expect(fastParse(source)).toBeUndefined();
  });

  it('agrees with the full parse on damaged copies of real mail wherever it answers', async () => {
    // A fixed LCG, so a failure is the same on every run.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const sources = [
      ...(await Promise.all(Object.values(common).map((mail) => compose(mail)))),
      ...Object.values(odd).map((s) => Buffer.from(s, 'latin1')),
      await compose(corpus[0]!.mail),
    ];
    const damage = [' ', '\t', '\r\n', '\n', '=', '-', '"', ';', ':', '(', '\\', 'A', '\r', '=0A', '--', '\xe9'];
    let answered = 0;
    for (let i = 0; i < 400; i++) {
      const source = sources[i % sources.length]!.toString('latin1');
      const at = Math.floor(random() * source.length);
      const cut = Math.floor(random() * 3);
      const damaged = source.slice(0, at) + damage[Math.floor(random() * damage.length)]! + source.slice(at + cut);
      if (await expectSame(Buffer.from(damaged, 'latin1'))) answered++;
    }
    // Most damage leaves a shape it reads; the rest it declines.
    expect(answered).toBeGreaterThan(200);
  });

  it("flattens only a long text's start for its preview, with the same preview as the whole text's", () => {
    // The preview as defined: the whole text flattened, then cut.
    const wholePreview = (text: string) => {
      const flat = oneLine(text);
      if (flat.length <= PREVIEW_LENGTH) return flat;
      const cut = flat.slice(0, PREVIEW_LENGTH - 1);
      const space = cut.lastIndexOf(' ');
      return `${space > PREVIEW_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
    };
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pieces = ['word', ' ', '\n\n', '\t', '\u00a0', '\ufeff', '🎉', 'x'.repeat(90), ' '.repeat(700), 'é'];
    for (let i = 0; i < 300; i++) {
      const text = Array.from({ length: Math.floor(random() * 120) }, () => pieces[Math.floor(random() * pieces.length)]!).join('');
      expect(makePreview(text), JSON.stringify(text)).toBe(wholePreview(text));
    }
  });
});
