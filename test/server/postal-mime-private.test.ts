// The one place mailroom adapts postal-mime's private parts
// (src/server/store/postal-mime-private.ts): pinned to the version it was
// written for, and what a parse gives is what postal-mime's own decoding
// gives, across the chunk size the adaptation uses.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import PostalMime from 'postal-mime';
import { describe, expect, it } from 'vitest';
import { joinChunks } from '../../src/server/store/postal-mime-private.js';
import { parseMail } from '../../src/server/store/mime-parse.js';

const packageJson = (name: string) => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`${name}/package.json`), 'utf8')) as { version: string };

describe("postal-mime's decoders, adapted", () => {
  it('are adapted for the pinned version only (an upgrade must re-check postal-mime-private.ts)', () => {
    expect(packageJson('postal-mime').version).toBe('4.0.0');
    const pinned = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> }).dependencies[
      'postal-mime'
    ];
    expect(pinned).toBe('4.0.0');
    // In effect once mime-parse.ts is loaded: a quoted-printable part starts with the small buffer, and no decoder joins through a Blob.
    const root = (
      new PostalMime() as unknown as { root: { setupContentDecoder(te: string): void; contentDecoder: { buffer: Uint8Array; finalize: () => unknown } } }
    ).root;
    root.setupContentDecoder('quoted-printable');
    expect(root.contentDecoder.buffer.length).toBe(8 * 1024);
    for (const encoding of ['quoted-printable', 'base64', '7bit']) {
      root.setupContentDecoder(encoding);
      expect(String(root.contentDecoder.finalize)).not.toContain('Blob');
    }
  });

  it('join chunks as a Blob does: bytes, views and strings (UTF-8), into an ArrayBuffer of their own', () => {
    const pooled = Buffer.from('pooled');
    const joined = joinChunks([new Uint8Array([0x61, 0x62]).buffer, pooled.subarray(1, 3), 'é\n']);
    expect(joined).toBeInstanceOf(ArrayBuffer);
    expect(Buffer.from(joined).toString('utf8')).toBe('aboo' + 'é\n');
    expect(joined.byteLength).toBe(7);
  });

  it('decode quoted-printable past the first buffer, base64 and 7bit parts exactly', async () => {
    // Each line is 3 escapes (one é and a soft break): 40,000 é decode to 80,000 bytes, ten times the adapted first buffer.
    const qp = Array.from({ length: 20_000 }, () => '=C3=A9=C3=A9=').join('\r\n');
    const attachment = Buffer.from(Array.from({ length: 30_000 }, (_, i) => i % 251));
    const source = Buffer.from(
      [
        'From: a@example.com',
        'To: b@mailroom.test',
        'Subject: parts',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
        '',
        '--b',
        'Content-Type: multipart/alternative; boundary="c"',
        '',
        '--c',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        `${qp}`,
        'end=20',
        '--c',
        'Content-Type: text/html; charset=utf-8',
        'Content-Transfer-Encoding: 7bit',
        '',
        '<p>café</p>',
        '--c--',
        '--b',
        'Content-Type: application/octet-stream; name="a.bin"',
        'Content-Disposition: attachment; filename="a.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        attachment.toString('base64').replace(/.{76}/g, '$&\r\n'),
        '--b--',
        '',
      ].join('\r\n'),
    );
    const parsed = await parseMail(source);
    expect(parsed.text).toBe(`${'é'.repeat(40_000)}end \n`);
    expect(parsed.html).toBe('<p>café</p>\n');
    expect(parsed.attachments).toEqual([{ filename: 'a.bin', content_type: 'application/octet-stream', size: 30_000, content_id: null }]);
  });
});
