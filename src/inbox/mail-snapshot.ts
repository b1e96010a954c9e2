// `mail.snapshot()`: a mail as text a reviewer reads in a snapshot diff,
// the same on every run. The headers that matter to the person who gets
// it, the text part, the HTML part as readable text with its links, and the
// attachments by name, type and size; every value that differs from run to
// run masked (snapshot-masks.ts). It is only a string: storing, comparing
// and updating it is each runner's own snapshot feature
// (`expect(mail.snapshot()).toMatchSnapshot()`, and in Vitest
// `expect(mail).toMatchSnapshot()` through the serializer
// mailroomjs/vitest registers), so the core knows no runner.
import { decodeWords } from 'postal-mime';
import type { MailAttachment } from '../client/messages.js';
import type { ProviderStamp } from '../contract/providers.js';
import { expectedError } from '../contract/validation.js';
import { extractCodes } from '../contract/extract.js';
import { readableHtml } from '../contract/readable-html.js';
import { applyMasks, resolveMasks, type SnapshotMask } from './snapshot-masks.js';

export { DEFAULT_MASKS, type SnapshotMask } from './snapshot-masks.js';

/** Options of `mail.snapshot()` and `mailSnapshot()`. */
export interface MailSnapshotOptions {
  /**
   * Masks by label: a RegExp or a string adds one (each match shows as
   * `[label]`), or replaces the default of that label; `false` turns a
   * default off. The defaults: token, address, provider-id, message-id,
   * uuid, code, random, date (see docs/assertions.md).
   */
  readonly masks?: Readonly<Record<string, SnapshotMask>>;
  /** More headers to show, by name, after the usual ones (e.g. `['X-Campaign']`). */
  readonly headers?: readonly string[];
}

/** What a snapshot is made of: a `Mail`, or anything with its parts. */
export interface SnapshotMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly attachments: readonly MailAttachment[];
  /** The test's own address, masked as `[address]`. */
  readonly address?: string;
  readonly messageId?: string | null;
  readonly provider?: ProviderStamp | null;
  /** The one-time codes to mask; found in the text and HTML when not given. */
  readonly codes?: readonly string[];
}

// Shown when present, in this order: who it is from and to, what it says,
// where a reply goes, and how to leave the list (RFC 2369 and 8058).
const HEADERS = ['reply-to', 'list-unsubscribe', 'list-unsubscribe-post'];
const OPTION_KEYS = ['masks', 'headers'];

/**
 * The mail as a stable, readable text for a snapshot:
 *
 * ```text
 * From: Acme <hello@acme.example>
 * To: [address]
 * Subject: Confirm your email
 *
 * --- text ---
 * Your confirmation code is: [code]
 * …
 * --- html ---
 * Or confirm with this link: Confirm my email <https://acme.example/confirm?token=[token]>
 * …
 * --- attachments ---
 * invoice.pdf (application/pdf, 15 bytes)
 * ```
 */
export function mailSnapshot(mail: SnapshotMail, options: MailSnapshotOptions = {}): string {
  const { masks, headers: extraHeaders = [] } = validateOptions(options);
  const resolved = resolveMasks(
    {
      address: mail.address,
      messageId: mail.messageId,
      providerId: mail.provider?.id,
      codes: mail.codes ?? extractCodes(mail.text, mail.html),
    },
    masks,
  );
  const mask = (text: string) => applyMasks(text, resolved);
  const lines = [`From: ${mail.from}`, `To: ${mail.to.join(', ')}`];
  if (mail.cc.length > 0) lines.push(`Cc: ${mail.cc.join(', ')}`);
  lines.push(`Subject: ${mail.subject}`);
  for (const name of [...HEADERS, ...extraHeaders.map((h) => h.toLowerCase())]) {
    // Unfolded, and encoded words (`=?UTF-8?Q?J=C3=BCrgen?=`) decoded, as a mail client shows them.
    for (const value of mail.headers[name] ?? []) lines.push(`${displayName(name)}: ${decodeWords(value.replace(/\s+/g, ' ').trim())}`);
  }
  if (mail.provider) lines.push(`Provider: ${describeProvider(mail.provider)}`);
  // Sizes are left unmasked: a size that happens to read like a code is still a size.
  const attachments = mail.attachments.map((a) => `${mask(a.filename ?? '(no name)')} (${a.contentType}, ${a.size} bytes${a.contentId ? ', inline' : ''})`);
  return `${[
    mask(lines.join('\n')),
    `--- text ---\n${mask(readableText(mail.text)) || '(none)'}`,
    `--- html ---\n${mail.html.trim() === '' ? '(none)' : mask(readableHtml(mail.html)) || '(no text)'}`,
    `--- attachments ---\n${attachments.length === 0 ? '(none)' : attachments.join('\n')}`,
  ].join('\n\n')}\n`;
}

/** The text part, its line ends and trailing spaces evened out, no blank lines at either end. */
function readableText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+|\n+$/g, '');
}

function describeProvider(stamp: ProviderStamp): string {
  const parts = [stamp.name, `id ${stamp.id}`];
  if (stamp.tags.length > 0) parts.push(`tags ${stamp.tags.join(', ')}`);
  const metadata = Object.entries(stamp.metadata);
  if (metadata.length > 0) parts.push(`metadata ${metadata.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  return parts.join('; ');
}

/** `list-unsubscribe-post` as `List-Unsubscribe-Post`. */
function displayName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase());
}

function validateOptions(options: unknown): { masks?: Readonly<Record<string, unknown>>; headers?: readonly string[] } {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw expectedError('options', 'an object like { masks, headers }', options);
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) throw new TypeError(`Unknown mail snapshot option \`${key}\`; expected one of ${OPTION_KEYS.join(', ')}`);
  }
  const { masks, headers } = options as { masks?: Readonly<Record<string, unknown>>; headers?: unknown };
  if (headers !== undefined && !(Array.isArray(headers) && headers.every((h) => typeof h === 'string' && /^[\x21-\x39\x3b-\x7e]+$/.test(h)))) {
    throw expectedError('headers', 'an array of header names, like ["X-Campaign"]', headers);
  }
  return { masks, headers: headers as readonly string[] | undefined };
}
