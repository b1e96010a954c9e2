// One received source and what is read out of it: the list's summary (kept
// for the message's lifetime) and the full parse (kept only for the most
// recent messages). Both are made on first read, never at intake.
import { fastParse } from './fast-parse.js';
import { fastSummary } from './fast-summary.js';
import type { MessageBody } from '../base/stored-message.js';
import { parseMail, summarize } from './mime-parse.js';
import type { ParsedMail, ParsedSummary } from '../base/parsed-mail.js';

/**
 * Full parses are big (headers, text, html) and mostly wanted once, right after
 * the list that found the message, so only the most recent ones are kept.
 * Summaries are small and are kept for the message's lifetime.
 */
export class ParseCache {
  readonly #entries = new Map<MessageContent, ParsedMail>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxEntries = 256, maxBytes = 64 * 1024 * 1024) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  get(content: MessageContent): ParsedMail | undefined {
    const parsed = this.#entries.get(content);
    if (parsed) {
      this.#entries.delete(content);
      this.#entries.set(content, parsed);
    }
    return parsed;
  }

  set(content: MessageContent, parsed: ParsedMail): void {
    if (this.#entries.has(content)) return;
    this.#entries.set(content, parsed);
    this.#bytes += content.size;
    for (const [oldest] of this.#entries) {
      if (this.#entries.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      if (oldest === content) break;
      this.#entries.delete(oldest);
      this.#bytes -= oldest.size;
    }
  }
}

/** Past this size the full parse reads a source: the fast path would first copy it whole into a string. */
const FAST_PARSE_MAX_BYTES = 1024 * 1024;

/**
 * The full parse of a source (as kept: a latin1 string or a Buffer): the
 * fast path for the usual shapes, which answers exactly as postal-mime
 * would (fast-parse.ts), and postal-mime for the rest.
 */
export function parseSource(source: string | Buffer): Promise<ParsedMail> {
  const fast = source.length <= FAST_PARSE_MAX_BYTES ? fastParse(typeof source === 'string' ? source : source.toString('latin1')) : undefined;
  return fast ? Promise.resolve(fast) : parseMail(typeof source === 'string' ? Buffer.from(source, 'latin1') : source);
}

/**
 * Sources up to this size are kept as a one-byte string (latin1: one
 * character per byte, so every byte comes back as it was) rather than a
 * Buffer. A Buffer costs about 270 bytes of its own (its object, its
 * ArrayBuffer, the backing store's record), half again the size of a
 * 512-byte mail (bench/store-bytes.ts); a string costs 16. Larger sources
 * stay Buffers, outside the JS heap and its limit.
 */
const STRING_SOURCE_MAX_BYTES = 4096;

/** One received source, shared by every recipient's copy. */
export class MessageContent implements MessageBody {
  readonly #source: Buffer | string;
  readonly envelopeFrom: string;
  /** The memory store's count of the copies it holds (byte-budget.ts). */
  copiesHeld = 0;
  readonly #cache: ParseCache;
  #summary: ParsedSummary | undefined;
  #parsing: Promise<ParsedMail> | undefined;

  /**
   * `raw`: the source, or the source as a latin1 string (as the webhooks'
   * delivery thread gets it). `summary`: when the store already has it (a
   * Redis store keeps it beside the source).
   */
  constructor(raw: Buffer | string, envelopeFrom: string, cache: ParseCache, summary?: ParsedSummary) {
    if (typeof raw === 'string') this.#source = raw.length <= STRING_SOURCE_MAX_BYTES ? raw : Buffer.from(raw, 'latin1');
    else this.#source = raw.length <= STRING_SOURCE_MAX_BYTES ? raw.toString('latin1') : raw;
    this.envelopeFrom = envelopeFrom;
    this.#cache = cache;
    this.#summary = summary;
  }

  /** The source's size in bytes. */
  get size(): number {
    return this.#source.length;
  }

  /** The source as received; a small one is a fresh copy each time. */
  get raw(): Buffer {
    const source = this.#source;
    return typeof source === 'string' ? Buffer.from(source, 'latin1') : source;
  }

  source(): Promise<Buffer> {
    return Promise.resolve(this.raw);
  }

  latin1(): Promise<string> {
    const source = this.#source;
    return Promise.resolve(typeof source === 'string' ? source : source.toString('latin1'));
  }

  /** The list's view of the message, parsed on first use and then kept. */
  get summaryIfKnown(): ParsedSummary | undefined {
    return this.#summary;
  }

  async summary(): Promise<ParsedSummary> {
    this.#summary ??= fastSummary(this.raw);
    return this.#summary ?? (this.#summary = summarize(await this.parsed()));
  }

  /** The full parse: from the cache of recent parses, or parsed now (once, however many callers wait). */
  parsed(): Promise<ParsedMail> {
    const cached = this.#cache.get(this);
    if (cached) return Promise.resolve(cached);
    this.#parsing ??= parseSource(this.#source).then((parsed) => {
      this.#parsing = undefined;
      this.#cache.set(this, parsed);
      this.#summary ??= summarize(parsed);
      return parsed;
    });
    return this.#parsing;
  }
}
