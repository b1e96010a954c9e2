// An address's attempt log read as the sender's mails: which attempts were
// retries of which mail, and how long the sender waited before each one.
//
// A mail is known by its Message-ID once its DATA was received; before that
// (a refusal at RCPT carries none) an attempt is taken as a retry of the
// oldest mail from the same sender whose last attempt was deferred or
// dropped, provided it began after that reply - two mails sent side by side
// both begin before either is answered, so neither is taken for the
// other's retry. An attempt that fits no earlier mail begins a new one.
import type { SmtpAttempt } from '../client/smtp-lab.js';

export type DeliveryState = 'accepted' | 'rejected' | 'pending';

export interface Delivery {
  /** 1-based, in the order the mails' first attempts came. */
  readonly number: number;
  readonly attempts: readonly SmtpAttempt[];
  /** The mail's Message-ID, once one of its attempts got as far as the end of DATA. */
  readonly messageId: string | null;
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
    let delivery: Open | undefined;
    if (attempt.messageId !== null) delivery = open.findLast((d) => d.messageId === attempt.messageId);
    delivery ??= open.find((d) => d.state === 'pending' && d.from === from && (d.messageId === null || attempt.messageId === null) && d.lastAt <= began);
    const previous = delivery?.attempts.at(-1);
    if (!delivery) {
      delivery = { number: open.length + 1, from, attempts: [], messageId: null, state: 'pending', lastAt: 0 };
      open.push(delivery);
    }
    delivery.attempts.push(attempt);
    delivery.messageId ??= attempt.messageId;
    delivery.lastAt = attempt.at.getTime();
    delivery.state = attempt.outcome === 'accepted' ? 'accepted' : attempt.outcome === 'rejected' ? 'rejected' : 'pending';
    entries.push({
      attempt,
      delivery: delivery.number,
      try: delivery.attempts.length,
      waitedMs: previous ? Math.max(0, began - previous.at.getTime()) : undefined,
    });
  }
  const deliveries = open.map((d) => Object.freeze({ number: d.number, attempts: d.attempts, messageId: d.messageId, state: d.state }));
  return { deliveries, entries, retries: entries.filter((e) => e.try > 1).length };
}
