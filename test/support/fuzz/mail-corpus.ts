// Mail as broken senders break it: a fixed corpus of the worst cases (issue
// 11: malformed MIME, bare LF, NUL bytes, 8-bit headers, multiparts 100 deep,
// 10,000 headers) and a generator of messages assembled from the same kinds
// of parts. Bytes, not strings: 8-bit and NUL bytes reach the wire as they are.
import fc from 'fast-check';

const latin1 = (text: string) => Buffer.from(text, 'latin1');

function nestedMultipart(depth: number): string {
  let body = 'Content-Type: text/plain\r\n\r\nthe innermost part\r\n';
  for (let level = depth; level > 0; level--) {
    const boundary = `b${level}`;
    body = `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\n${body}--${boundary}--\r\n`;
  }
  return `Subject: nested ${depth} deep\r\n${body}`;
}

function nestedRfc822(depth: number): string {
  let body = 'Subject: innermost\r\n\r\nhello from the bottom\r\n';
  for (let level = 0; level < depth; level++) body = `Subject: level ${level}\r\nContent-Type: message/rfc822\r\n\r\n${body}`;
  return body;
}

/** The fixed worst cases, by name. Every one must be accepted, listed, fetched and deleted. */
export const MAIL_CORPUS: ReadonlyArray<readonly [name: string, source: Buffer]> = [
  [
    'malformed MIME',
    latin1(
      'Subject: lost boundary\r\nDate: yesterday-ish\r\nContent-Type: multipart/mixed; boundary="abc"\r\n\r\n--abc\r\nContent-Type: text/plain\r\n\r\nfirst\r\n--abc\r\nContent-Type: text/html; charset=x-nope\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64@@@\r\n--zzz--\r\n',
    ),
  ],
  ['multipart without a boundary', latin1('Subject: no boundary\r\nContent-Type: multipart/alternative\r\n\r\nstray\r\n')],
  ['bare LF throughout', latin1('Subject: bare LF\nFrom: lf@example.com\nContent-Type: text/plain\n\nline one\nline two\n.\n..\nend\n')],
  ['bare CR and mixed endings', latin1('Subject: bare CR\rX-A: 1\r\nX-B: 2\n\r\nbody\rmore\r\n')],
  ['NUL bytes in headers and body', latin1('Subject: nul\0inside\r\nX-Nul: \0\0\0\r\n\r\nbody\0with\0nuls\r\n')],
  ['8-bit Latin-1 headers', latin1('From: "Jos\xe9" <jose@example.com>\r\nSubject: Caf\xe9 cr\xe8me\r\n\r\nOl\xe1\r\n')],
  ['8-bit UTF-8 headers', Buffer.from('From: "Zoë" <zoe@example.com>\r\nSubject: Grüße 日本 🎉\r\n\r\nbody\r\n', 'utf8')],
  ['broken encoded words', latin1('Subject: =?utf-8?B?@@@?= =?x-nope?Q?abc?= =?utf-8?Q?unterminated\r\nFrom: =?utf-8?B?w4k?= <e@example.com>\r\n\r\nx\r\n')],
  ['multipart 100 deep', latin1(nestedMultipart(100))],
  ['message/rfc822 50 deep', latin1(nestedRfc822(50))],
  ['10,000 headers', latin1(`Subject: many headers\r\n${Array.from({ length: 10_000 }, (_, i) => `X-H${i}: value ${i}\r\n`).join('')}\r\nbody\r\n`)],
  ['a 200,000-character line', latin1(`Subject: long line\r\n\r\n${'x'.repeat(200_000)}\r\n`)],
  ['a header line without a colon', latin1('Subject: ok\r\nthis is not a header\r\nX-After: 1\r\n\r\nbody\r\n')],
  ['no header block', latin1('just words, no headers\r\n')],
  ['only a blank line', latin1('\r\n')],
  ['dots at line starts', latin1('Subject: dots\r\n\r\n.\r\n..\r\n.leading\r\n.\r\n')],
  [
    'RFC 2231 and hostile attachment names',
    latin1(
      'Subject: names\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=utf-8\'\'%0D%0ASet-Cookie%3A%20x.txt; filename*0="a"; filename*1="b"\r\nContent-Transfer-Encoding: base64\r\n\r\nAAAA====\r\n--b--\r\n',
    ),
  ],
];

const headerLine = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => `Subject: ${s}`),
  fc.string({ unit: 'binary', maxLength: 30 }).map((s) => `Subject: ${Buffer.from(s, 'utf8').toString('latin1')}`),
  fc.constantFrom('From: a@example.com', 'From: "A, B" <a@example.com>', 'From: <>', 'From: @@@', 'To: undisclosed-recipients:;', 'Cc: ,,,'),
  fc.constantFrom('Date: Tue, 1 Dec 2026 07:00:00 +0000', 'Date: nonsense', 'Message-ID: <x@y>', 'Message-ID: no brackets'),
  fc.constantFrom(
    'Content-Type: text/html; charset=utf-8',
    'Content-Type: text/plain; charset=x-nope',
    'Content-Type: multipart/mixed',
    'Content-Type: multipart/mixed; boundary=""',
    'Content-Type: ;;;==',
    'Content-Transfer-Encoding: base64',
    'Content-Transfer-Encoding: quoted-printable',
    'Content-Transfer-Encoding: x-uuencode',
  ),
  fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,16}$/), fc.string({ unit: 'binary-ascii', maxLength: 40 })).map(([n, v]) => `${n}: ${v.replace(/[\r\n]/g, ' ')}`),
  fc.constantFrom('X-Folded: one\r\n two\r\n\tthree', 'no colon at all', ': empty name', 'X-Nul: a\0b'),
);

function partArb(depth: number): fc.Arbitrary<string> {
  const leaf = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 200 }).map((s) => `Content-Type: text/plain; charset=utf-8\r\n\r\n${s}`),
    fc.string({ maxLength: 100 }).map((s) => `Content-Type: text/html\r\n\r\n<p>${s}</p><script>x()</script>`),
    fc.string({ maxLength: 100 }).map((s) => `Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n${s}`),
    fc.string({ maxLength: 60 }).map((s) => `Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ${s}=\r\n=3D`),
  );
  if (depth === 0) return leaf;
  const multipart = fc
    .tuple(fc.array(partArb(depth - 1), { minLength: 0, maxLength: 3 }), fc.stringMatching(/^[a-z0-9'()+_,./:=?-]{1,20}$/), fc.boolean())
    .map(([parts, boundary, close]) => {
      const inner = parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('');
      return `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n${inner}${close ? `--${boundary}--\r\n` : ''}`;
    });
  return fc.oneof(leaf, multipart);
}

/** A generated message: hostile headers, a MIME tree up to 4 deep, CRLF or bare LF or a mix. */
export const messageArb: fc.Arbitrary<Buffer> = fc
  .tuple(fc.array(headerLine, { maxLength: 8 }), partArb(4), fc.constantFrom('crlf', 'crlf', 'lf', 'mixed'), fc.boolean())
  .map(([headers, part, endings, nul]) => {
    let text = `${headers.join('\r\n')}${headers.length > 0 ? '\r\n' : ''}${part}\r\n`;
    if (endings === 'lf') text = text.replace(/\r\n/g, '\n');
    if (endings === 'mixed') text = text.replace(/\r\n/g, (m, at: number) => (at % 3 === 0 ? '\n' : m));
    if (nul) text = text.replace(/e/g, 'e\0');
    return Buffer.from(text, 'utf8');
  });

/**
 * SMTP dot-stuffing: a dot that starts a line is doubled. smtp-server takes a
 * bare LF for a line end when it removes the extra dot (though not for the
 * end of the message), so a dot after a bare LF is doubled too.
 */
export function dotStuffed(source: Buffer): Buffer {
  const text = source.toString('latin1');
  return Buffer.from(text.replace(/(^|\n)\./g, '$1..'), 'latin1');
}
