// A fast path to the list's summary (from, to, subject, preview) for the shape
// almost all application mail has: a header block, then a text/plain body,
// alone or as the first part of a multipart/alternative or multipart/mixed.
//
// The full MIME parse costs about 90 us and a lot of garbage per message, so a
// first list of 25 unparsed messages would pay it 25 times and the garbage
// would set the p99. This reads only the top-level headers and the first text
// part, with the same header decoding the full parser uses (postal-mime's
// decodeWords and addressParser), and says "don't know" (undefined) for
// anything else, which then takes the full parse.
// test/server/summary.test.ts checks that both paths agree.
import { isUtf8 } from 'node:buffer';
import { addressParser, decodeWords } from 'postal-mime';
import { detached, formatFrom, makePreview, oneLine } from './mime-parse.js';
import type { ParsedSummary } from '../base/parsed-mail.js';

const MAX_HEADER_BYTES = 64 * 1024;
const MAX_DEPTH = 3;
// Decoding megabytes for a 100-character preview is the full parser's job.
const MAX_TEXT_BYTES = 1024 * 1024;
const SIMPLE_CHARSETS = new Map<string, string>([
  ['utf-8', 'utf-8'],
  ['utf8', 'utf-8'],
  // WHATWG (and so TextDecoder, and so the full parser) reads US-ASCII as Windows-1252
  ['us-ascii', 'windows-1252'],
  ['ascii', 'windows-1252'],
  ['iso-8859-1', 'windows-1252'],
  ['latin1', 'windows-1252'],
  ['windows-1252', 'windows-1252'],
]);

type Headers = Array<readonly [key: string, value: string]>;

interface Part {
  readonly headers: Headers;
  readonly bodyStart: number;
  readonly end: number;
}

interface ContentType {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
}

const WSP = /^[ \t]+|[ \t]+$/g;

/** The summary, or undefined when the message needs the full parser. */
export function fastSummary(raw: Buffer): ParsedSummary | undefined {
  const top = readPart(raw, 0, raw.length);
  if (!top) return undefined;
  const preview = previewOf(raw, top, 0);
  if (preview === undefined) return undefined;
  const first = (key: string) => top.headers.find(([k]) => k === key)?.[1];
  const to: string[] = [];
  for (const [key, value] of top.headers) {
    if (key !== 'to' || !value) continue;
    for (const a of addressParser(value)) {
      if (a.group) to.push(...a.group.map((m) => m.address));
      else if (a.address) to.push(a.address);
    }
  }
  const from = first('from');
  const subject = first('subject');
  // Summaries live as long as their message: keep none of the decoded source alive.
  return Object.freeze({
    from: detached(formatFrom(from ? addressParser(from)[0] : undefined)),
    to: Object.freeze(to.map(detached)),
    subject: detached(oneLine(subject ? decodeWords(subject) : '')),
    preview: detached(preview),
  });
}

/** Splits a part into its header fields and body, decoding the header bytes like mime-parse.ts does. */
function readPart(raw: Buffer, start: number, end: number): Part | undefined {
  let headerEnd: number;
  let bodyStart: number;
  if (raw[start] === 0x0a || (raw[start] === 0x0d && raw[start + 1] === 0x0a)) {
    headerEnd = start;
    bodyStart = start + (raw[start] === 0x0a ? 1 : 2);
  } else {
    const crlf = raw.indexOf('\r\n\r\n', start);
    const lf = raw.indexOf('\n\n', start);
    const at = crlf !== -1 && (lf === -1 || crlf < lf) ? crlf : lf;
    if (at === -1 || at >= end) return undefined; // no body: rare, let the full parser decide
    headerEnd = at;
    bodyStart = at + (at === crlf ? 4 : 2);
  }
  if (headerEnd - start > MAX_HEADER_BYTES) return undefined;
  const bytes = raw.subarray(start, headerEnd);
  const text = isUtf8(bytes) ? bytes.toString('utf8') : new TextDecoder('windows-1252').decode(bytes);
  const headers: Headers = [];
  let current: string[] | undefined;
  const flush = () => {
    if (!current) return;
    const line = current.join('');
    const colon = line.indexOf(':');
    const key = (colon < 0 ? line : line.slice(0, colon)).replace(WSP, '').toLowerCase();
    headers.push([key, colon < 0 ? '' : line.slice(colon + 1).replace(WSP, '')]);
  };
  for (const line of text.split(/\r?\n/)) {
    if (current && (line.startsWith(' ') || line.startsWith('\t'))) {
      current.push(line);
    } else {
      flush();
      current = [line];
    }
  }
  flush();
  return { headers, bodyStart, end };
}

function contentTypeOf(part: Part): ContentType | undefined {
  const value = part.headers.find(([k]) => k === 'content-type')?.[1];
  if (value === undefined || value === '') return { type: 'text/plain', params: new Map() };
  const [type = '', ...rest] = value.split(';');
  const params = new Map<string, string>();
  for (const piece of rest) {
    const eq = piece.indexOf('=');
    if (eq < 0) {
      if (piece.trim() === '') continue;
      return undefined;
    }
    const name = piece.slice(0, eq).trim().toLowerCase();
    let raw = piece.slice(eq + 1).trim();
    if (name.includes('*') || params.has(name)) return undefined; // RFC 2231 continuations, duplicates
    if (raw.startsWith('"')) {
      if (!raw.endsWith('"') || raw.length < 2 || raw.slice(1, -1).includes('"') || raw.includes('\\')) return undefined;
      raw = raw.slice(1, -1);
    }
    params.set(name, raw);
  }
  return { type: type.trim().toLowerCase(), params };
}

function headerOf(part: Part, key: string): string | undefined {
  return part.headers.find(([k]) => k === key)?.[1];
}

function previewOf(raw: Buffer, part: Part, depth: number): string | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const type = contentTypeOf(part);
  if (!type) return undefined;
  if (type.type === 'text/plain') {
    if ((headerOf(part, 'content-disposition') ?? '').toLowerCase().startsWith('attachment')) return undefined;
    const text = decodeText(raw.subarray(part.bodyStart, part.end), part, type);
    return text === undefined ? undefined : makePreview(text);
  }
  if (type.type !== 'multipart/alternative' && type.type !== 'multipart/mixed') return undefined;
  const boundary = type.params.get('boundary');
  if (!boundary) return undefined;
  const children = splitMultipart(raw, part, boundary);
  if (!children || children.length === 0) return undefined;
  const first = children[0]!;
  if (type.type === 'multipart/mixed') {
    // The full parser joins every inline text part into the text; a preview from
    // the first one alone is only right when no later part adds text.
    for (const later of children.slice(1)) {
      const t = contentTypeOf(later);
      if (!t || t.type.startsWith('text/') || t.type.startsWith('multipart/') || t.type === 'message/rfc822') {
        if (!(headerOf(later, 'content-disposition') ?? '').toLowerCase().startsWith('attachment')) return undefined;
      }
    }
    return previewOf(raw, first, depth + 1);
  }
  // multipart/alternative: the text is its text/plain part (the first one), and
  // only when it has exactly one.
  const plain = children.filter((c) => contentTypeOf(c)?.type === 'text/plain');
  if (plain.length !== 1 || children.some((c) => contentTypeOf(c)?.type.startsWith('multipart/'))) return undefined;
  return previewOf(raw, plain[0]!, depth + 1);
}

/** The parts between `--boundary` lines, or undefined when the structure is not clean. */
function splitMultipart(raw: Buffer, part: Part, boundary: string): Part[] | undefined {
  const delimiter = Buffer.from(`--${boundary}`);
  const starts: number[] = [];
  let closed = false;
  let at = part.bodyStart;
  for (;;) {
    const found = raw.indexOf(delimiter, at);
    if (found === -1 || found >= part.end) break;
    at = found + delimiter.length;
    if (found !== part.bodyStart && raw[found - 1] !== 0x0a) continue; // not at a line start
    const after = raw[at];
    if (after === 0x2d && raw[at + 1] === 0x2d) {
      starts.push(found);
      closed = true;
      break;
    }
    // trailing junk or a bare CR after the boundary: the full parser knows best
    if (after !== 0x0a && !(after === 0x0d && raw[at + 1] === 0x0a)) return undefined;
    starts.push(found);
  }
  if (!closed || starts.length < 2) return undefined;
  const parts: Part[] = [];
  for (let i = 0; i + 1 < starts.length; i++) {
    const lineEnd = raw.indexOf('\n', starts[i]);
    const contentStart = lineEnd + 1;
    let contentEnd = starts[i + 1]! - 1; // drop the line break that belongs to the next delimiter
    if (raw[contentEnd - 1] === 0x0d) contentEnd--;
    if (contentEnd < contentStart) return undefined;
    const child = readPart(raw, contentStart, contentEnd);
    if (!child) return undefined;
    parts.push(child);
  }
  return parts;
}

function decodeText(body: Buffer, part: Part, type: ContentType): string | undefined {
  if (body.length > MAX_TEXT_BYTES) return undefined;
  if ((type.params.get('format') ?? '').toLowerCase() === 'flowed') return undefined;
  const charset = SIMPLE_CHARSETS.get((type.params.get('charset') ?? 'utf-8').toLowerCase());
  if (!charset) return undefined;
  const encoding = (headerOf(part, 'content-transfer-encoding') ?? '7bit').toLowerCase();
  let bytes: Buffer | undefined;
  if (encoding === '7bit' || encoding === '8bit' || encoding === 'binary') bytes = body;
  else if (encoding === 'quoted-printable') bytes = decodeQuotedPrintable(body);
  else if (encoding === 'base64') bytes = decodeBase64(body);
  if (!bytes) return undefined;
  if (charset === 'utf-8' && !isUtf8(bytes)) return undefined;
  return new TextDecoder(charset).decode(bytes);
}

function decodeQuotedPrintable(body: Buffer): Buffer | undefined {
  const text = body.toString('latin1');
  if (/=(?![0-9A-Fa-f]{2}|\r?\n)/.test(text)) return undefined; // a stray '=': the full parser knows best
  return Buffer.from(
    text.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  );
}

function decodeBase64(body: Buffer): Buffer | undefined {
  const text = body.toString('latin1').replace(/[\r\n\t ]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  return Buffer.from(text, 'base64');
}
