// What one stored message is, as every concern that handles mail sees it: the
// store keeps it, SMTP intake hands it to the attempt feed, the webhooks and
// the waits read it. It lives here, below all of them, so none of them has
// to import the store's boundary (store/mail-store.ts) for its shape.
import type { ParsedMail, ParsedSummary } from './parsed-mail.js';

/** One received source and what is read out of it; shared by every recipient's copy. */
export interface MessageBody {
  readonly envelopeFrom: string;
  /** The list's summary when it is already known (no parse, no round trip). */
  readonly summaryIfKnown: ParsedSummary | undefined;
  summary(): Promise<ParsedSummary>;
  parsed(): Promise<ParsedMail>;
  /** The source as received (the `raw` route). */
  source(): Promise<Buffer>;
  /** The source as a latin1 string (a character a byte), as a webhook's payload carries it: a small source kept as one is given as it is, not copied. */
  latin1(): Promise<string>;
}

export interface StoredMessage {
  readonly id: string;
  /** The mailbox key (lower-cased address). */
  readonly mailbox: string;
  /** Wall-clock ms when the message was stored. */
  readonly receivedAt: number;
  readonly size: number;
  readonly content: MessageBody;
  /** Set by the memory store when the message goes; a Redis store's copy is a snapshot and stays false. */
  removed: boolean;
}
