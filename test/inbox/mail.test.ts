import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { describe, expect, it } from 'vitest';
import { extractCodes, extractLabelledLinks, extractLinks, htmlToText } from '../../src/contract/extract.js';
import { parseMail } from '../../src/inbox/mail.js';

/** A real RFC 822 source, built the way a sender builds it. */
async function compose(options: Mail.Options): Promise<string> {
  const buffer = await new MailComposer({ from: 'Acme <hello@acme.example>', to: 'signup-1@mailroom.test', subject: 'Hi', ...options }).compile().build();
  return buffer.toString('utf8');
}

describe('parseMail', () => {
  it('reads headers, parts, attachments and the raw source', async () => {
    const source = await compose({
      cc: 'boss@acme.example',
      subject: 'Confirm your email',
      messageId: '<abc@acme.example>',
      date: new Date('2030-01-01T12:00:00Z'),
      text: 'Hello',
      html: '<p>Hello</p>',
      attachments: [{ filename: 'terms.txt', content: 'be nice' }],
    });
    const mail = await parseMail(source, { id: 'm1' });
    expect(mail).toMatchObject({
      id: 'm1',
      address: 'signup-1@mailroom.test',
      from: 'Acme <hello@acme.example>',
      to: ['signup-1@mailroom.test'],
      cc: ['boss@acme.example'],
      subject: 'Confirm your email',
      messageId: '<abc@acme.example>',
      date: new Date('2030-01-01T12:00:00Z'),
    });
    expect(mail.text.trim()).toBe('Hello');
    expect(mail.html).toContain('<p>Hello</p>');
    expect(mail.attachments).toEqual([{ filename: 'terms.txt', contentType: 'text/plain', size: 7, contentId: null }]);
    expect(mail.header('Subject')).toBe('Confirm your email');
    expect(await mail.raw()).toBe(source);
    expect(JSON.parse(JSON.stringify(mail))).toMatchObject({ id: 'm1', subject: 'Confirm your email', links: [], codes: [] });
  });

  it('finds the link and the code placed after the preview, in both parts', async () => {
    const filler = 'Thanks for signing up. '.repeat(20);
    const mail = await parseMail(
      await compose({
        text: `${filler}\n\nConfirm: https://app.example/confirm?token=a1b2&u=7\n\nYour code is 482913.\n`,
        html: `<p>${filler}</p><p><a href="https://app.example/confirm?token=a1b2&amp;u=7">Confirm</a></p><p>Your code is <b>482913</b>.</p>`,
      }),
    );
    expect(mail.links).toEqual(['https://app.example/confirm?token=a1b2&u=7']);
    expect(mail.codes).toEqual(['482913']);
  });
});

describe('extractLinks', () => {
  it('takes anchors and text URLs in document order, http(s) only, deduplicated', () => {
    const html = `
      <a href="https://a.example/1">one</a>
      <a href="mailto:x@y.example">mail</a> <a href="#top">top</a> <a href="/relative">rel</a>
      <p>or paste https://b.example/2 into your browser</p>
      <a href="https://a.example/1">again</a>
      <area href="http://c.example/3">
      <script>var u = "https://tracker.example/";</script>`;
    const text = 'Links: https://b.example/2 and https://d.example/4, then (https://e.example/5).';
    expect(extractLinks(html, text)).toEqual([
      'https://a.example/1',
      'https://b.example/2',
      'http://c.example/3',
      'https://d.example/4',
      'https://e.example/5',
    ]);
  });

  it('reads plain text alone, and ignores bare domains and addresses', () => {
    expect(extractLinks('', 'Visit acme.example or write to help@acme.example; confirm at https://acme.example/c?x=1.')).toEqual([
      'https://acme.example/c?x=1',
    ]);
  });
});

describe('extractLabelledLinks', () => {
  it("gives each of extractLinks' links the words on its first anchor, an image's alt text, or nothing for a URL in the text", () => {
    const html =
      '<a href="https://app.test/verify?t=1">  Confirm\n my <b>email</b> </a> <a href="https://app.test/verify?t=1">again</a>' +
      '<a href="https://app.test/home"><img src="logo.png" alt="Acme"></a>';
    expect(extractLabelledLinks(html, 'Or paste https://app.test/other')).toEqual([
      { url: 'https://app.test/verify?t=1', text: 'Confirm my email' },
      { url: 'https://app.test/home', text: 'Acme' },
      { url: 'https://app.test/other', text: '' },
    ]);
    expect(extractLabelledLinks(html, 'Or paste https://app.test/other').map((l) => l.url)).toEqual(extractLinks(html, 'Or paste https://app.test/other'));
  });
});

describe('extractCodes', () => {
  it.each([
    ['Your code is 482913.', ['482913']],
    ['Verification code:\n\n    K7Q-29X\n', ['K7Q-29X']],
    ['482913 is your one-time password', ['482913']],
    ['Seu código: 5521', ['5521']],
    ['Use OTP A1B2C3 to continue', ['A1B2C3']],
    ['Enter 90210 to continue', ['90210']],
  ])('finds the code in %j', (text, codes) => {
    expect(extractCodes(text, '')).toEqual(codes);
  });

  it('puts the code next to a keyword before other numbers', () => {
    expect(extractCodes('Order 771234 shipped. Your verification code is 5521.', '')).toEqual(['5521', '771234']);
  });

  it('ignores years, times, dates, amounts, decimals, #numbers, and digits in links and addresses', () => {
    const text = [
      '© 2025 Acme',
      'Sent at 12:30:45 on 2030-01-01 (01/02/2030)',
      'Total $1234.56, 12.5%, ticket #123456',
      'https://app.example/confirm/938271 and user-5551234@mailroom.test',
    ].join('\n');
    expect(extractCodes(text, '')).toEqual([]);
  });

  it('reads the HTML when there is no text part, skipping scripts and styles', () => {
    expect(extractCodes('', '<style>.c1234 { }</style><script>var x = 99887766;</script><p>Your code:</p><div>314159</div>')).toEqual(['314159']);
  });
});

describe('htmlToText', () => {
  it('keeps the visible words and breaks between blocks', () => {
    expect(htmlToText('<html><head><title>T</title></head><body><p>Hello&nbsp;there</p><p>Bye</p></body></html>')).toBe('Hello\u00a0there\n\nBye');
  });
});
