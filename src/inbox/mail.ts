// A fetched message: everything a test reads out of a mail.
import PostalMime from 'postal-mime';
import { extractCodes, extractLinks } from '../contract/extract.js';
import type { MailCheckOptions } from '../checks/options.js';
import type { MailCheckReport } from '../checks/problem.js';
import { checkMail } from '../checks/run-checks.js';
import type { MailAttachment, MessageDetail } from '../client/messages.js';
import { PROVIDER_HEADER, readStampHeader, type ProviderStamp } from '../contract/providers.js';
import { mailSnapshot, type MailSnapshotOptions } from './mail-snapshot.js';

export type RawLoader = (signal?: AbortSignal) => Promise<string>;

export class Mail implements MessageDetail {
  /** The mailbox this mail was read from. */
  readonly address: string;
  readonly id: string;
  readonly messageId: string | null;
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly subject: string;
  readonly preview: string;
  readonly date: Date | null;
  readonly receivedAt: Date;
  readonly size: number;
  readonly text: string;
  readonly html: string;
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly attachments: readonly MailAttachment[];
  /** http(s) links from HTML anchors and text URLs, deduplicated, in document order. */
  readonly links: readonly string[];
  /** Likely one-time codes, most likely first (see `extractCodes` for the heuristic). */
  readonly codes: readonly string[];
  /**
   * Which provider API took the mail (the embedded server's Resend, SES,
   * SendGrid, Postmark, Mailgun or Brevo endpoints), with the id it answered
   * the app with and the call's tags and metadata; null for mail that came
   * over SMTP. See docs/providers.md.
   */
  readonly provider: ProviderStamp | null;
  readonly #loadRaw: RawLoader;

  constructor(address: string, detail: MessageDetail, loadRaw: RawLoader) {
    this.address = address;
    this.id = detail.id;
    this.messageId = detail.messageId;
    this.from = detail.from;
    this.to = Object.freeze([...detail.to]);
    this.cc = Object.freeze([...detail.cc]);
    this.subject = detail.subject;
    this.preview = detail.preview;
    this.date = detail.date;
    this.receivedAt = detail.receivedAt;
    this.size = detail.size;
    this.text = detail.text;
    this.html = detail.html;
    this.headers = Object.freeze(Object.fromEntries(Object.entries(detail.headers).map(([k, v]) => [k.toLowerCase(), Object.freeze([...v])])));
    this.attachments = Object.freeze(detail.attachments.map((a) => Object.freeze({ ...a })));
    this.links = Object.freeze(extractLinks(detail.html, detail.text));
    this.codes = Object.freeze(extractCodes(detail.text, detail.html));
    this.provider = readStampHeader(this.header(PROVIDER_HEADER)) ?? null;
    this.#loadRaw = loadRaw;
  }

  /** The first value of a header, by case-insensitive name. */
  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()]?.[0];
  }

  /** The source as received (`message/rfc822`), fetched on demand. */
  raw(options: { signal?: AbortSignal } = {}): Promise<string> {
    return this.#loadRaw(options.signal);
  }

  /**
   * Is this mail good? Fetches its links, checks its HTML and CSS against
   * what mail clients support (caniemail), its images, size and text part;
   * `{ ok, problems }`, `ok` when no problem is an error. See docs/mail-checks.md.
   */
  check(options?: MailCheckOptions): Promise<MailCheckReport> {
    return checkMail(this, options);
  }

  /**
   * The mail as stable, readable text for a snapshot: From, To, Subject and
   * the headers that matter, the text part, the HTML as readable text with
   * its links, the attachments; the test's address, codes, link tokens,
   * dates and ids masked (`[code]`). `expect(mail.snapshot()).toMatchSnapshot()`
   * in either runner. See docs/assertions.md.
   */
  snapshot(options?: MailSnapshotOptions): string {
    return mailSnapshot(this, options);
  }

  toJSON(): Record<string, unknown> {
    const { address, id, messageId, from, to, cc, subject, preview, date, receivedAt, size, text, html, headers, attachments, links, codes, provider } = this;
    return { address, id, messageId, from, to, cc, subject, preview, date, receivedAt, size, text, html, headers, attachments, links, codes, provider };
  }
}

export interface ParseMailOptions {
  /** The mailbox it belongs to; defaults to the first To address. */
  readonly address?: string;
  readonly id?: string;
  readonly receivedAt?: Date;
}

/**
 * Parses a message source (RFC 822) into a `Mail`, without any service:
 * for sample messages, and for checking what a sender produces.
 */
export async function parseMail(source: string | Uint8Array, options: ParseMailOptions = {}): Promise<Mail> {
  const email = await PostalMime.parse(source, { attachmentEncoding: 'arraybuffer' });
  const to = flatten(email.to);
  const headers: Record<string, string[]> = {};
  for (const { key, value } of email.headers) (headers[key] ??= []).push(value);
  const text = email.text ?? '';
  const date = email.date ? new Date(email.date) : null;
  const sourceText = typeof source === 'string' ? source : new TextDecoder().decode(source);
  const detail: MessageDetail = {
    id: options.id ?? email.messageId ?? '',
    from: formatMailbox(email.from),
    to,
    subject: email.subject ?? '',
    preview: text.replace(/\s+/g, ' ').trim().slice(0, 100),
    receivedAt: options.receivedAt ?? new Date(),
    size: typeof source === 'string' ? Buffer.byteLength(source) : source.byteLength,
    messageId: email.messageId ?? null,
    cc: flatten(email.cc),
    date: date && !Number.isNaN(date.getTime()) ? date : null,
    headers,
    text,
    html: email.html ?? '',
    attachments: email.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.mimeType,
      size: typeof a.content === 'string' ? Buffer.byteLength(a.content) : a.content.byteLength,
      contentId: a.contentId ?? null,
    })),
  };
  return new Mail(options.address ?? to[0] ?? '', detail, async () => sourceText);
}

type PostalAddress = NonNullable<Awaited<ReturnType<typeof PostalMime.parse>>['from']>;

function flatten(addresses: readonly PostalAddress[] | undefined): string[] {
  return (addresses ?? []).flatMap((a) => (a.group ? a.group.map((m) => m.address) : [a.address ?? '']));
}

function formatMailbox(address: PostalAddress | undefined): string {
  if (!address) return '';
  if (address.group) return address.group.map((m) => m.address).join(', ');
  return address.name ? `${address.name} <${address.address}>` : (address.address ?? '');
}
