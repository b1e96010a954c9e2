// An address's attempt log read as the sender's mails: which attempts were
// retries of which mail, and how long the sender waited before each one.
//
// A mail is known by its Message-ID once its DATA was received. Otherwise
// (a refusal at RCPT carries none, and some senders make a new Message-ID
// for every try) an attempt is taken as a retry of the oldest mail from the
// same sender whose last attempt was deferred or dropped, provided it began
// after that reply - two mails sent side by side both begin before either
// is answered, so neither is taken for the other's retry - and its subject,
// where both are known, is the same. After a permanent refusal only an
// attempt with the same Message-ID, or from the same sender with the same
// subject, counts as a retry of the refused mail. An attempt that fits no
// earlier mail begins a new one.
//
// Both halves read the log this way: the runner's matchers and failure text
// (runner/smtp-matchers.ts), and the MCP tool that shows it to an agent
// (mcp/smtp-lab-tools.ts), so "mail 1, try 2" means the same in both.
import type { ProviderName } from './providers.js';
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind } from './smtp-lab.js';
import type { WireSmtpAttempt } from './wire.js';

/** One SMTP attempt that named the address as a recipient. */
export interface SmtpAttempt {
  /** When the server decided the reply (its clock, ms precision). */
  readonly at: Date;
  /**
   * When the sender began this transaction: its connection opened, or its
   * MAIL FROM on a connection it had used before. A retry begins after the
   * reply it answers. Null when the service does not say.
   */
  readonly beganAt: Date | null;
  readonly clientIp: string;
  /** MAIL FROM, `''` for the null sender. */
  readonly from: string;
  readonly to: string;
  readonly stage: SmtpAttemptStage;
  /** The reply code; null when the connection dropped without one. */
  readonly code: number | null;
  readonly enhancedCode: string | null;
  readonly text: string;
  readonly outcome: SmtpAttemptOutcome;
  /** The test rule that decided the reply, or null for the server's own. */
  readonly rule: SmtpRuleKind | null;
  /** The mail's Message-ID header, once its DATA was received (null for a refusal at RCPT). */
  readonly messageId: string | null;
  /** The mail's Subject, likewise. */
  readonly subject: string | null;
  /** The stored message's id (a `MailSummary` id), for an accepted attempt. */
  readonly storedId: string | null;
  /** For a provider API call (stage `api`, `code` its HTTP status): which provider's; null for SMTP. */
  readonly provider: ProviderName | null;
  /** For a provider API call: the client's User-Agent (which SDK made it). */
  readonly userAgent: string | null;
  /** When the sender was told to come back, in ms after the reply (`Retry-After`, a greylist's window); null when not said. */
  readonly retryAfterMs: number | null;
}

/** An attempt as the wire carries it (`GET /mailbox/attempts`, the MCP tool's structured content), read into the shape above. */
export function attemptFromWire(wire: WireSmtpAttempt): SmtpAttempt {
  return Object.freeze({
    at: new Date(wire.at),
    beganAt: wire.began_at === null ? null : new Date(wire.began_at),
    clientIp: wire.client_ip,
    from: wire.from,
    to: wire.to,
    stage: wire.stage,
    code: wire.code,
    enhancedCode: wire.enhanced_code,
    text: wire.text,
    outcome: wire.outcome,
    rule: wire.rule,
    messageId: wire.message_id,
    subject: wire.subject,
    storedId: wire.stored_id,
    provider: wire.provider ?? null,
    userAgent: wire.user_agent ?? null,
    retryAfterMs: wire.retry_after_ms ?? null,
  });
}

export type DeliveryState = 'accepted' | 'rejected' | 'pending';

export interface Delivery {
  /** 1-based, in the order the mails' first attempts came. */
  readonly number: number;
  readonly attempts: readonly SmtpAttempt[];
  /** The mail's Message-ID, once one of its attempts got as far as the end of DATA. */
  readonly messageId: string | null;
  /** Its subject, likewise. */
  readonly subject: string | null;
  /** `pending`: its last attempt was deferred or dropped. */
  readonly state: DeliveryState;
}

export interface TimelineEntry {
  readonly attempt: SmtpAttempt;
  /** The mail it belongs to (`Delivery.number`). */
  readonly delivery: number;
  /** 1 for a mail's first attempt, 2 for its first retry, … */
  readonly try: number;
  /** For a retry: how long the sender waited, from the reply to the previous attempt to this one's beginning. */
  readonly waitedMs: number | undefined;
}

export interface ReadLog {
  readonly deliveries: readonly Delivery[];
  /** Every attempt, oldest first, with its mail. */
  readonly entries: readonly TimelineEntry[];
  /** Retries in all: attempts beyond each mail's first. */
  readonly retries: number;
}

interface Open {
  readonly number: number;
  readonly from: string;
  readonly attempts: SmtpAttempt[];
  messageId: string | null;
  subject: string | null;
  state: DeliveryState;
  lastAt: number;
}

/** When an attempt began (its transaction), or when it was answered when the service does not say. */
export function beganAt(attempt: SmtpAttempt): number {
  return (attempt.beganAt ?? attempt.at).getTime();
}

export function readLog(attempts: readonly SmtpAttempt[]): ReadLog {
  const open: Open[] = [];
  const entries: TimelineEntry[] = [];
  for (const attempt of attempts) {
    const from = attempt.from.toLowerCase();
    const began = beganAt(attempt);
    const later = (d: Open) => d.from === from && d.lastAt <= began;
    // Two Message-IDs are two mails, unless the subjects say it is one sender making a new one every try.
    const sameMail = (d: Open) =>
      d.messageId !== null && attempt.messageId !== null
        ? d.subject !== null && d.subject === attempt.subject
        : d.subject === null || attempt.subject === null || d.subject === attempt.subject;
    let delivery: Open | undefined;
    if (attempt.messageId !== null) delivery = open.findLast((d) => d.messageId === attempt.messageId);
    delivery ??= open.find((d) => d.state === 'pending' && later(d) && sameMail(d));
    delivery ??= open.find((d) => d.state === 'rejected' && later(d) && d.subject !== null && d.subject === attempt.subject);
    const previous = delivery?.attempts.at(-1);
    if (!delivery) {
      delivery = { number: open.length + 1, from, attempts: [], messageId: null, subject: null, state: 'pending', lastAt: 0 };
      open.push(delivery);
    }
    delivery.attempts.push(attempt);
    delivery.messageId ??= attempt.messageId;
    delivery.subject ??= attempt.subject;
    delivery.lastAt = attempt.at.getTime();
    delivery.state = attempt.outcome === 'accepted' ? 'accepted' : attempt.outcome === 'rejected' ? 'rejected' : 'pending';
    entries.push({
      attempt,
      delivery: delivery.number,
      try: delivery.attempts.length,
      waitedMs: previous ? Math.max(0, began - previous.at.getTime()) : undefined,
    });
  }
  const deliveries = open.map((d) => Object.freeze({ number: d.number, attempts: d.attempts, messageId: d.messageId, subject: d.subject, state: d.state }));
  return { deliveries, entries, retries: entries.filter((e) => e.try > 1).length };
}
