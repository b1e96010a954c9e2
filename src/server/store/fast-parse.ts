// A fast path to the full parse (what `GET /api/v1/message/{id}` and a
// webhook's `message.received` show) for the shapes application mail has:
// ASCII header blocks, a text/plain or text/html body, alone, as a
// multipart/alternative, or with attachments in a multipart/mixed, in
// 7bit, 8bit, quoted-printable or base64 and a common charset.
//
// Why: every webhook delivery parses its mail, and postal-mime's parse
// (a line at a time, each through an await, a Uint8Array and a decoder; a
// structured header read a character at a time) cost about half of what a
// delivery adds to the server, with ~80 KB of garbage for a 1.5 KB mail
// (issue 45). This reads the same lines the same way, in one synchronous
// pass over the source as a latin1 string (one character per byte, as the
// store keeps a small source and the delivery thread gets it: no Buffer is
// made for an ASCII text), and builds postal-mime's result for those shapes:
// the header decoding and the address lists are postal-mime's own exported
// functions, the rest mirrors its code (mime-node.js, postal-mime.js at the
// pinned 4.0.0) for the inputs it accepts. Anything else - a comment or a
// quoted pair in a structured header, a non-ASCII header byte, a nested
// message, a report, flowed text, a calendar part, a text part only in the
// other type, malformed base64, a part with no blank line - is declined
// (undefined) and takes the full parse. test/server/fast-parse.test.ts
// proves the two equal over real mail and declines the odd shapes.
import { addressParser, decodeWords, type Address } from 'postal-mime';
import type { ParsedMail } from '../base/parsed-mail.js';
import { parsedMailOf, type MailParts } from './mime-parse.js';

const MAX_DEPTH = 8;
const MAX_HEADER_BYTES = 64 * 1024;
const CR = 0x0d;
/** Bytes 0x00-0x7f only: text every charset here decodes as it is. */
const ASCII = /^[^\x80-\xff]*$/;

/** Charset labels (as postal-mime lowercases them) that it hands to `TextDecoder` as written: the same decoder here. */
const DECODERS = new Map<string, InstanceType<typeof TextDecoder>>(
  ['utf-8', 'utf8', 'us-ascii', 'ascii', 'iso-8859-1', 'latin1', 'windows-1252'].map((label) => [label, new TextDecoder(label)]),
);
/** Leaves postal-mime treats apart (nested messages, reports, calendar parts): the full parse's. */
const DECLINED_LEAF = /^message\/|^text\/calendar$|^application\/ics$/;
/** A structured header's value or parameter as this path reads it: no quoting, comment, escape or space inside. */
const PLAIN_TOKEN = /^[^\s"()\\;]+$/;
const ENCODINGS = new Set(['', '7bit', '8bit', 'binary', 'quoted-printable', 'base64']);

interface Structured {
  readonly value: string;
  readonly params: Readonly<Record<string, string>>;
}

interface Node {
  readonly parent: Node | undefined;
  readonly depth: number;
  readonly children: Node[];
  /** Where its header lines start and end (the blank line), and its body's lines (up to the next delimiter), in the source. */
  readonly headerStart: number;
  headerEnd: number;
  bodyStart: number;
  bodyEnd: number;
  inBody: boolean;
  finished: boolean;
  headers: { key: string; value: string }[];
  contentType: Structured;
  multipart: string | false;
  disposition: Structured;
  encoding: string;
  contentId: string | undefined;
}

/** Ends the pass when the message is not one this path answers for. */
const decline = (): never => {
  throw new Error('declined: the full parse reads this one');
};

/** The full parse of a source given as latin1 (`raw`), or undefined when it needs postal-mime (mime-parse.ts). */
export function fastParse(raw: string): ParsedMail | undefined {
  try {
    return parsedMailOf(partsOf(raw));
  } catch {
    // Declined, or something postal-mime's helpers threw on: the full parse decides (and may fall back on its lenient one).
    return undefined;
  }
}

function partsOf(raw: string): MailParts {
  const root = newNode(undefined, 0);
  const boundaries: { readonly value: string; readonly node: Node }[] = [];
  let current = root;
  let headerBytes = 0;
  let position = 0;
  const finalize = (node: Node): void => {
    if (node.finished) return;
    if (!node.inBody) decline(); // a part (or a message) with no blank line after its headers
    const at = boundaries.findLastIndex((b) => b.node === node);
    if (at !== -1) boundaries.splice(at, 1);
    for (const child of node.children) finalize(child);
    node.finished = true;
  };
  while (position < raw.length) {
    // A line as postal-mime reads it: up to its LF, without the CRs and LFs that end it.
    const start = position;
    const lf = raw.indexOf('\n', start);
    position = lf === -1 ? raw.length : lf + 1;
    let end = lf === -1 ? raw.length : lf;
    while (end > start && raw.charCodeAt(end - 1) === CR) end--;
    const boundary = boundaries.length > 0 && end - start > 2 && raw.startsWith('--', start) ? boundaryOf(raw, start, end, boundaries) : undefined;
    if (boundary) {
      if (boundary.terminator) {
        finalize(boundary.node);
        current = boundary.node.parent ?? root;
      } else {
        for (const child of boundary.node.children) finalize(child);
        current = newNode(boundary.node, position);
      }
      continue;
    }
    if (current.inBody) {
      current.bodyEnd = position;
    } else if (start === end) {
      current.inBody = true;
      current.headerEnd = start;
      current.bodyStart = current.bodyEnd = position;
      headerBytes += start - current.headerStart;
      if (headerBytes > MAX_HEADER_BYTES) decline();
      readHeaders(raw, current);
      if (current.multipart) boundaries.push({ value: current.contentType.params.boundary || decline(), node: current });
    }
  }
  finalize(root);

  const text = new Map<Node, { plain?: string[]; html?: string[] }>();
  const types = new Set<'plain' | 'html'>();
  const attachments: MailParts['attachments'][number][] = [];
  const collect = (node: Node, alternative: Node | undefined): void => {
    if (!node.multipart) {
      const type = node.contentType.value;
      if (DECLINED_LEAF.test(type)) decline();
      if (node.disposition.value !== 'attachment' && (type === 'text/plain' || type === 'text/html')) {
        const kind = type === 'text/html' ? 'html' : 'plain';
        const entry = text.get(alternative ?? node) ?? {};
        text.set(alternative ?? node, entry);
        (entry[kind] ??= []).push(textOf(raw, node));
        types.add(kind);
      } else {
        const filename = node.disposition.params.filename || node.contentType.params.name || null;
        attachments.push({
          filename: filename ? decodeWords(filename) : null,
          mimeType: type,
          size: contentOf(raw, node).length,
          ...(node.contentId ? { contentId: node.contentId } : {}),
        });
      }
    } else if (node.multipart === 'alternative') {
      alternative = node;
    }
    for (const child of node.children) collect(child, alternative);
  };
  collect(root, undefined);
  // postal-mime renders a text part missing in one type from the other type's: not done here.
  const rendered: { plain: string[]; html: string[] } = { plain: [], html: [] };
  for (const entry of text.values()) {
    for (const kind of types) rendered[kind].push(...(entry[kind] ?? decline()));
  }
  const plain = rendered.plain.join('\n');
  const html = rendered.html.join('\n');
  // Its fields set one by one, not spread: see event-body.ts on spreads in the delivery path.
  return Object.assign(fromHeaders(root.headers), { text: plain || undefined, html: html || undefined, attachments });
}

function newNode(parent: Node | undefined, headerStart: number): Node {
  const depth = parent ? parent.depth + 1 : 0;
  if (depth > MAX_DEPTH) decline();
  const node: Node = {
    parent,
    depth,
    children: [],
    headerStart,
    headerEnd: headerStart,
    bodyStart: headerStart,
    bodyEnd: headerStart,
    inBody: false,
    finished: false,
    headers: [],
    contentType: { value: 'text/plain', params: {} },
    multipart: false,
    disposition: { value: '', params: {} },
    encoding: '',
    contentId: undefined,
  };
  parent?.children.push(node);
  return node;
}

/** Whether the line is a delimiter of an open multipart (the innermost first, as postal-mime looks). */
function boundaryOf(raw: string, start: number, end: number, boundaries: readonly { readonly value: string; readonly node: Node }[]) {
  for (let i = boundaries.length - 1; i >= 0; i--) {
    const { value, node } = boundaries[i]!;
    if (end - start < value.length + 2 || !raw.startsWith(value, start + 2)) continue;
    let at = start + 2 + value.length;
    const terminator = end - at >= 2 && raw.startsWith('--', at);
    if (terminator) at += 2;
    while (at < end && (raw.charCodeAt(at) === 0x20 || raw.charCodeAt(at) === 0x09)) at++;
    if (at === end) return { node, terminator };
  }
  return undefined;
}

/** postal-mime's processHeaders for an ASCII header block: fields unfolded, the first content field of each kind read. */
function readHeaders(raw: string, node: Node): void {
  // postal-mime reads header bytes as UTF-8, and mime-parse re-encodes Windows-1252 ones: ASCII only here.
  if (!ASCII.test(raw.slice(node.headerStart, node.headerEnd))) decline();
  const folded: string[][] = [];
  forEachLine(raw, node.headerStart, node.headerEnd, (start, end) => {
    const line = raw.slice(start, end);
    const previous = folded.at(-1);
    if (previous && (line.startsWith(' ') || line.startsWith('\t'))) previous.push(line);
    else folded.push([line]);
  });
  const seen = new Set<string>();
  let contentType: string | undefined;
  let encoding = '';
  let disposition = '';
  for (const parts of folded) {
    const line = parts.join('');
    const colon = line.indexOf(':');
    const key = trimWsp(colon < 0 ? line : line.slice(0, colon)).toLowerCase();
    const value = colon < 0 ? '' : trimWsp(line.includes('\r') ? line.slice(colon + 1).replace(/[\r\n]+/g, ' ') : line.slice(colon + 1));
    node.headers.push({ key, value });
    if (seen.has(key)) continue;
    seen.add(key);
    if (key === 'content-type') contentType = value;
    else if (key === 'content-transfer-encoding') encoding = value;
    else if (key === 'content-disposition') disposition = value;
    else if (key === 'content-id') node.contentId = value;
  }
  if (contentType !== undefined) node.contentType = structured(contentType);
  if (node.contentType.value === '') decline();
  node.multipart = /^multipart\//.test(node.contentType.value) ? node.contentType.value.slice(node.contentType.value.indexOf('/') + 1) : false;
  node.disposition = structured(disposition);
  if (encoding.includes('(')) decline();
  node.encoding = (/[\w-]+/.exec(encoding.toLowerCase()) ?? [''])[0];
  if (!ENCODINGS.has(node.encoding)) decline();
}

/** RFC 5322's whitespace around a field, as postal-mime trims it (never Unicode spaces). */
function trimWsp(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value.charCodeAt(start) === 0x20 || value.charCodeAt(start) === 0x09)) start++;
  while (end > start && (value.charCodeAt(end - 1) === 0x20 || value.charCodeAt(end - 1) === 0x09)) end--;
  return value.slice(start, end);
}

/**
 * `type/subtype; name=value; name="value"` with plain tokens, read as
 * postal-mime's parseStructuredHeader reads it; declined with anything that
 * takes its character-by-character rules (comments, escapes, spaces inside a
 * value, RFC 2231 sections, a parameter twice).
 */
function structured(header: string): Structured {
  const pieces = header.split(';');
  const value = trimWsp(pieces[0]!);
  if (value !== '' && !PLAIN_TOKEN.test(value)) decline();
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (let i = 1; i < pieces.length; i++) {
    const piece = pieces[i]!;
    const eq = piece.indexOf('=');
    if (eq < 0) {
      if (piece.trim() !== '') decline();
      continue;
    }
    const name = piece.slice(0, eq).trim().toLowerCase();
    let param = trimWsp(piece.slice(eq + 1));
    if (param.length >= 2 && param.startsWith('"') && param.endsWith('"')) param = param.slice(1, -1);
    if (!/^[a-z0-9_.-]+$/.test(name) || name in params || !PLAIN_TOKEN.test(param)) decline();
    params[name] = param;
  }
  return { value: value.toLowerCase(), params };
}

/** Each line in [from, to) as postal-mime reads it: up to its LF, without the CRs and LFs that end it. */
function forEachLine(raw: string, from: number, to: number, visit: (start: number, end: number) => void): void {
  let position = from;
  while (position < to) {
    const start = position;
    const lf = raw.indexOf('\n', start);
    position = lf === -1 || lf >= to ? to : lf + 1;
    let end = lf === -1 || lf >= to ? to : lf;
    while (end > start && raw.charCodeAt(end - 1) === CR) end--;
    visit(start, end);
  }
}

/** A leaf's decoded bytes as latin1, as postal-mime's decoders give them for the lines it accepts; base64 as its decoded bytes. */
function contentOf(raw: string, node: Node): string | Buffer {
  const body = raw.slice(node.bodyStart, node.bodyEnd);
  if (node.encoding === 'base64') {
    // Only what every base64 decoder reads alike: no other character, padding only at the end, no stray last character.
    const text = body.replace(/\r*\n/g, '');
    const data = text.replace(/=+$/, '');
    if (!/^[A-Za-z0-9+/]*$/.test(data) || data.length % 4 === 1 || text.length - data.length > 2) decline();
    return Buffer.from(data, 'base64');
  }
  if (node.encoding !== 'quoted-printable') {
    // Each line without the CRs that end it, and a LF after every line (the last one's too).
    if (body === '') return '';
    const lines = body.replace(/\r+\n/g, '\n');
    return lines.endsWith('\n') ? lines : `${lines.replace(/\r+$/, '')}\n`;
  }
  const pieces: string[] = [];
  forEachLine(raw, node.bodyStart, node.bodyEnd, (start, lineEnd) => {
    // postal-mime's QPDecoder.update: a trailing '=' is a soft break; `=XX` with both digits on the line decodes, any other '=' stays.
    const soft = lineEnd > start && raw.charCodeAt(lineEnd - 1) === 0x3d;
    const end = soft ? lineEnd - 1 : lineEnd;
    let literal = start;
    for (let j = raw.indexOf('=', start); j !== -1 && j + 2 < end; j = raw.indexOf('=', j + 1)) {
      const high = hexValue(raw.charCodeAt(j + 1));
      const low = hexValue(raw.charCodeAt(j + 2));
      if (high < 0 || low < 0) continue;
      pieces.push(raw.slice(literal, j), String.fromCharCode((high << 4) | low));
      j += 2;
      literal = j + 1;
    }
    if (literal < end) pieces.push(raw.slice(literal, end));
    if (!soft) pieces.push('\n');
  });
  return pieces.join('');
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/** A text leaf's text, decoded with its charset as postal-mime's getTextContent does (flowed text is declined). */
function textOf(raw: string, node: Node): string {
  const { charset, format } = node.contentType.params;
  if (format !== undefined && /^flowed$/i.test(format)) decline();
  const decoder = DECODERS.get((charset ?? 'utf8').trim().toLowerCase()) ?? decline();
  const bytes = contentOf(raw, node);
  // ASCII reads the same in every charset here: no decoder, no copy.
  if (typeof bytes === 'string' && ASCII.test(bytes)) return bytes;
  return decoder.decode(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
}

/** postal-mime's buildMessage: the address, subject, id and date fields from the top-level headers. */
function fromHeaders(headers: MailParts['headers']): Omit<MailParts, 'text' | 'html' | 'attachments'> {
  const first = (key: string) => headers.find((h) => h.key === key);
  const all = (key: string): Address[] | undefined => {
    const addresses: Address[] = [];
    for (const h of headers) if (h.key === key && h.value) addresses.push(...addressParser(h.value));
    return addresses.length > 0 ? addresses : undefined;
  };
  const fromHeader = first('from');
  const from = fromHeader?.value ? addressParser(fromHeader.value)[0] : undefined;
  const decoded = (key: string) => {
    const header = first(key);
    return header?.value ? decodeWords(header.value) : undefined;
  };
  const dateHeader = first('date');
  let date: string | undefined;
  if (dateHeader) {
    const parsed = new Date(dateHeader.value);
    // postal-mime tests `toString() === 'Invalid Date'`: true exactly when the time is NaN.
    date = Number.isNaN(parsed.getTime()) ? dateHeader.value : parsed.toISOString();
  }
  return { headers, from, to: all('to'), cc: all('cc'), subject: decoded('subject'), messageId: decoded('message-id'), date };
}
