// What a stored message reads as once parsed: the list's summary and the full
// parse. The shapes live here, with the stored message that carries them
// (stored-message.ts); the parsing itself is the store's (store/mime-parse.ts).
import type { WireAttachment } from '../../contract/wire.js';

/** What the list shows of a message: small, and kept for the message's lifetime. */
export interface ParsedSummary {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly preview: string;
}

export interface ParsedMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly cc: readonly string[];
  readonly subject: string;
  readonly preview: string;
  readonly messageId: string | null;
  readonly date: string | null;
  /** Lower-cased header name -> values in document order (unfolded, not decoded). */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly text: string | null;
  readonly html: string | null;
  readonly attachments: readonly WireAttachment[];
}
