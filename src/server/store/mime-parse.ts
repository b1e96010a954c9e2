// Turning a stored source into what the API shows. This runs on the first read of
// a message, not at intake: parsing at intake would make intake as slow as the
// parser, and most test mail is read once or never. The result is cached by
// the caller (message-content.ts), so a message is parsed at most once.
//
// It never throws: a message that the MIME parser refuses still gets a summary
// built from its header block and its body as text.
import { isUtf8 } from 'node:buffer';
import { Parser } from 'htmlparser2';
import PostalMime, { addressParser, decodeWords, type Address, type Email } from 'postal-mime';
import type { ParsedMail, ParsedSummary } from '../base/parsed-mail.js';
import { adaptPostalMime } from './postal-mime-private.js';

// Half of a parse was postal-mime joining each part's bytes: done in one copy instead (postal-mime-private.ts).
adaptPostalMime();

export const PREVIEW_LENGTH = 100;

export async function parseMail(raw: Buffer): Promise<ParsedMail> {
  const source = withUtf8Headers(raw);
  let email: Email;
  try {
    email = await PostalMime.parse(source);
  } catch {
    return parseLeniently(source);
  }
  const { headers, from, to, cc, subject, messageId, date, text, html } = email;
  return parsedMailOf({
    headers,
    from,
    to,
    cc,
    subject,
    messageId,
    date,
    text,
    html,
    attachments: email.attachments.map((a) => ({
      filename: a.filename,
      mimeType: a.mimeType,
      size: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
      ...(a.contentId === undefined ? {} : { contentId: a.contentId }),
    })),
  });
}

/** What a parse found, in postal-mime's terms (its `Email`), that the API's view is made of; the fast path (fast-parse.ts) finds the same. */
export interface MailParts extends Pick<Email, 'from' | 'to' | 'cc' | 'subject' | 'messageId' | 'date' | 'text' | 'html'> {
  readonly headers: readonly { readonly key: string; readonly value: string }[];
  readonly attachments: readonly { readonly filename: string | null; readonly mimeType: string; readonly size: number; readonly contentId?: string }[];
}

/** The API's view of a parsed message. */
export function parsedMailOf(email: MailParts): ParsedMail {
  const text = email.text ?? null;
  const html = email.html ?? null;
  return Object.freeze({
    from: formatFrom(email.from),
    to: addressesOf(email.to),
    cc: addressesOf(email.cc),
    subject: oneLine(email.subject ?? ''),
    preview: makePreview(text ?? (html === null ? '' : htmlToText(html))),
    messageId: email.messageId?.trim() || null,
    date: toIsoDate(email.date),
    headers: groupHeaders(email.headers.map((h) => [h.key, h.value] as const)),
    text,
    html,
    attachments: Object.freeze(
      email.attachments.map((a) => Object.freeze({ filename: a.filename, content_type: a.mimeType, size: a.size, content_id: a.contentId ?? null })),
    ),
  });
}

/**
 * The summary of a parsed message, in strings of its own: a substring can keep
 * its whole parent string (the decoded source) alive, and summaries live as
 * long as their message.
 */
export function summarize(parsed: ParsedMail): ParsedSummary {
  return Object.freeze({
    from: detached(parsed.from),
    to: Object.freeze(parsed.to.map(detached)),
    subject: detached(parsed.subject),
    preview: detached(parsed.preview),
  });
}

/** A copy of the string that shares no memory with the (possibly huge) string it was cut from. */
export function detached(value: string): string {
  return value.length === 0 ? '' : Buffer.from(value, 'utf8').toString('utf8');
}

/**
 * Headers are ASCII by RFC 5322, but senders put raw 8-bit text in them anyway,
 * usually Latin-1 / Windows-1252. The MIME parser reads header bytes as UTF-8 and
 * would turn those into U+FFFD; re-encoding a non-UTF-8 top-level header block as
 * UTF-8 from Windows-1252 keeps "Café" readable. Only the copy being parsed is
 * changed; the stored source stays byte for byte as received.
 */
function withUtf8Headers(raw: Buffer): Buffer {
  const end = headerEnd(raw);
  const head = raw.subarray(0, end);
  if (isUtf8(head)) return raw;
  const transcoded = Buffer.from(new TextDecoder('windows-1252').decode(head), 'utf8');
  return Buffer.concat([transcoded, raw.subarray(end)]);
}

/** Index just past the blank line that ends the header block (or the whole length). */
function headerEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf === -1 && lf === -1) return raw.length;
  if (crlf === -1) return lf + 2;
  if (lf === -1 || crlf < lf) return crlf + 4;
  return lf + 2;
}

function parseLeniently(raw: Buffer): ParsedMail {
  const end = headerEnd(raw);
  const head = raw.subarray(0, end).toString('utf8');
  const body = raw.subarray(end);
  const pairs: Array<readonly [string, string]> = [];
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) pairs.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const headers = groupHeaders(pairs);
  const first = (name: string): string | undefined => headers[name]?.[0];
  const decode = (value: string | undefined): string => {
    if (value === undefined) return '';
    try {
      return decodeWords(value);
    } catch {
      return value;
    }
  };
  const safeAddresses = (value: string | undefined): Address[] => {
    if (value === undefined) return [];
    try {
      return addressParser(decode(value));
    } catch {
      return [];
    }
  };
  const text = isUtf8(body) ? body.toString('utf8') : new TextDecoder('windows-1252').decode(body);
  const from = safeAddresses(first('from'))[0];
  return Object.freeze({
    from: formatFrom(from),
    to: addressesOf(safeAddresses(first('to'))),
    cc: addressesOf(safeAddresses(first('cc'))),
    subject: oneLine(decode(first('subject'))),
    preview: makePreview(text),
    messageId: first('message-id') ?? null,
    date: toIsoDate(first('date')),
    headers,
    text,
    html: null,
    attachments: Object.freeze([]),
  });
}

function groupHeaders(pairs: ReadonlyArray<readonly [string, string]>): Readonly<Record<string, readonly string[]>> {
  // A null-prototype object, so a header named __proto__ is just a header.
  const grouped = Object.create(null) as Record<string, string[]>;
  for (const [key, value] of pairs) (grouped[key] ??= []).push(value);
  return Object.freeze(grouped);
}

function flatten(addresses: readonly Address[] | undefined): Array<{ name: string; address: string }> {
  const out: Array<{ name: string; address: string }> = [];
  for (const a of addresses ?? []) {
    if (a.group) out.push(...a.group);
    else if (a.address) out.push({ name: a.name, address: a.address });
  }
  return out;
}

function addressesOf(addresses: readonly Address[] | undefined): readonly string[] {
  return Object.freeze(flatten(addresses).map((a) => a.address));
}

export function formatFrom(from: Address | undefined): string {
  const first = flatten(from ? [from] : [])[0];
  if (!first) return '';
  const name = oneLine(first.name);
  return name ? `${name} <${first.address}>` : first.address;
}

export function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

function toIsoDate(value: string | undefined): string | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** How much of a long text is flattened first for its preview: most texts reach the preview's length well within it. */
const PREVIEW_SCAN = 8 * PREVIEW_LENGTH;

/** A short excerpt for the list: whitespace collapsed, cut at a word boundary. */
export function makePreview(text: string): string {
  // Flattening a prefix gives a prefix of the flattened text, so when the prefix alone is longer
  // than a preview, the preview is the same as the whole text's, without flattening all of it.
  const head = text.length > PREVIEW_SCAN ? oneLine(text.slice(0, PREVIEW_SCAN)) : undefined;
  const flat = head !== undefined && head.length > PREVIEW_LENGTH ? head : oneLine(text);
  if (flat.length <= PREVIEW_LENGTH) return flat;
  const cut = flat.slice(0, PREVIEW_LENGTH - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > PREVIEW_LENGTH / 2 ? cut.slice(0, space) : cut}…`;
}

const SKIPPED_ELEMENTS = new Set(['script', 'style', 'head', 'title']);

/** Visible text of an HTML body, for the preview of HTML-only mail. */
function htmlToText(html: string): string {
  const parts: string[] = [];
  let skipping = 0;
  let length = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIPPED_ELEMENTS.has(name)) skipping++;
      },
      onclosetag(name) {
        if (SKIPPED_ELEMENTS.has(name) && skipping > 0) skipping--;
        else parts.push(' ');
      },
      ontext(data) {
        if (skipping > 0 || length > PREVIEW_LENGTH * 4) return;
        parts.push(data);
        length += data.length;
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return parts.join('');
}
