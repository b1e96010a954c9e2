// An SMTP attempt: what one recipient was told in one transaction, as the
// sender saw it (or in one provider API call: stage `api`, the HTTP status
// as its code). The intake publishes one for every reply that decided a
// recipient's fate (a refusal at RCPT, the answer at the end of DATA, a
// dropped connection), so that what a sender did can be shown and checked
// later - the per-address attempt log, and the delivery events a webhook
// receives - without either reaching into the SMTP session.
import type { ProviderName } from '../../contract/providers.js';
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind } from '../../contract/smtp-lab.js';
import type { StoredMessage } from './stored-message.js';

export type AttemptStage = SmtpAttemptStage;
export type AttemptOutcome = SmtpAttemptOutcome;

export interface SmtpAttempt {
  /** Wall-clock ms (the server's clock) when the reply was decided. */
  readonly at: number;
  readonly clientIp: string;
  /** MAIL FROM, `''` for the null sender. */
  readonly from: string;
  /** The recipient's mailbox, lower-cased, as RCPT TO named it. */
  readonly to: string;
  readonly stage: AttemptStage;
  /** The reply code; undefined when the connection dropped without one. */
  readonly code: number | undefined;
  /** `x.y.z`; undefined when there was no reply. */
  readonly enhancedCode: string | undefined;
  /** The reply's text after the enhanced code. */
  readonly text: string;
  readonly outcome: AttemptOutcome;
  /** The stored message's id, for an accepted attempt. */
  readonly messageId?: string | undefined;
  /**
   * When the sender began this transaction: its connection opened, or, on a
   * connection already used for one, its MAIL FROM. A retry begins after
   * the reply it answers. Known when the SMTP rules are on.
   */
  readonly beganAt?: number | undefined;
  /** The test rule that decided the reply (rules/), when one did. */
  readonly rule?: SmtpRuleKind | undefined;
  /**
   * The mail's own Message-ID header, for a mail refused or dropped at the
   * end of DATA while the SMTP rules are on. An accepted mail's headers are
   * in the stored message (`messageId`), read when needed rather than on
   * the path of every mail.
   */
  readonly headerMessageId?: string | undefined;
  /** Its Subject header, decoded, likewise. */
  readonly headerSubject?: string | undefined;
  /** For a provider API call (stage `api`): which provider's call it was. */
  readonly provider?: ProviderName | undefined;
  /** For a provider API call: the client's `User-Agent` (which SDK, which version). */
  readonly userAgent?: string | undefined;
  /** When the sender was told to come back (`Retry-After`, a greylist's window), in ms from the reply. */
  readonly retryAfterMs?: number | undefined;
  /** For a provider API call: the send as the provider's delivery events name it (webhooks/provider-events/). */
  readonly providerSend?: ProviderSendFacts | undefined;
}

/** What a provider's delivery event says of the send it is about: the id the call answered with, and the mail's own words. */
export interface ProviderSendFacts {
  /** The id the send call answered with (Resend `id`, SendGrid `X-Message-Id`, SES `MessageId`, ...). */
  readonly id: string;
  readonly subject: string | undefined;
  /** The mail's Message-ID header. */
  readonly messageId: string | undefined;
  readonly tags: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
}

/**
 * `message`: for an accepted attempt, the copy that was stored (the webhooks
 * build `message.received` from it without asking the store again). It is
 * handed beside the attempt, never inside it, so a listener that keeps
 * attempts (the attempt log) does not keep the mail alive.
 */
export type AttemptListener = (attempt: SmtpAttempt, message: StoredMessage | undefined) => void;

/** The outcome a reply code means to a sender: 2xx taken, 4xx try again later, 5xx give up. */
export function outcomeOfCode(code: number): AttemptOutcome {
  if (code < 400) return 'accepted';
  return code < 500 ? 'deferred' : 'rejected';
}

/** Splits `"5.1.2 Domain x is not served"` into its enhanced code and its text. */
export function splitEnhanced(reply: string): { readonly enhancedCode: string | undefined; readonly text: string } {
  const match = /^([245]\.\d{1,3}\.\d{1,3})\s+(.*)$/s.exec(reply);
  return match ? { enhancedCode: match[1], text: match[2]! } : { enhancedCode: undefined, text: reply };
}

/**
 * Where attempts go. Listeners run synchronously, in subscription order; one
 * that throws is reported and the others still run, so an observer can never
 * change what the sender is told.
 */
export class AttemptFeed {
  readonly #listeners = new Set<AttemptListener>();
  readonly #onListenerError: (error: unknown) => void;

  constructor(onListenerError: (error: unknown) => void) {
    this.#onListenerError = onListenerError;
  }

  /** Returns the unsubscribe function. */
  subscribe(listener: AttemptListener): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  publish(attempt: SmtpAttempt, message?: StoredMessage): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(attempt, message);
      } catch (error) {
        this.#onListenerError(error);
      }
    }
  }
}
