// The attempt log: every SMTP attempt that named an address as a recipient,
// per address, oldest first, as plain records (what a store would keep). It
// is filled from the attempt feed (smtp/attempts.ts), kept as long as mail is
// (the server's retention), and deleted with the mailbox. Bounded three ways:
// entries older than the retention go, each address keeps its newest
// `maxPerAddress`, and the whole log its newest `maxEntries`.
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind } from '../../contract/smtp-lab.js';
import type { WireSmtpAttempt } from '../../contract/wire.js';
import type { WallClock } from '../server-options.js';
import type { SmtpAttempt } from '../smtp/attempts.js';

export interface LoggedAttempt {
  readonly at: number;
  readonly beganAt: number | null;
  readonly clientIp: string;
  readonly from: string;
  readonly to: string;
  readonly stage: SmtpAttemptStage;
  readonly code: number | null;
  readonly enhancedCode: string | null;
  readonly text: string;
  readonly outcome: SmtpAttemptOutcome;
  readonly rule: SmtpRuleKind | null;
  /** The sender's Message-ID header, once DATA was received. */
  readonly messageId: string | null;
  /** The mail's Subject, once DATA was received. */
  readonly subject: string | null;
  /** The stored message's id, for an accepted attempt. */
  readonly storedId: string | null;
}

export interface AttemptLogOptions {
  readonly clock: WallClock;
  /** How long an entry is kept, in ms (the server's retention). */
  readonly retention: number;
  readonly maxPerAddress?: number;
  readonly maxEntries?: number;
}

export const DEFAULT_MAX_ATTEMPTS_PER_ADDRESS = 1_000;
export const DEFAULT_MAX_ATTEMPTS = 100_000;

interface Slot {
  readonly to: string;
  /** Undefined once removed from its address (cap, delete) before the whole log's queue reached it. */
  entry: LoggedAttempt | undefined;
}

export function loggedAttempt(attempt: SmtpAttempt): LoggedAttempt {
  return Object.freeze({
    at: attempt.at,
    beganAt: attempt.beganAt ?? null,
    clientIp: attempt.clientIp,
    from: attempt.from,
    to: attempt.to,
    stage: attempt.stage,
    code: attempt.code ?? null,
    enhancedCode: attempt.enhancedCode ?? null,
    text: attempt.text,
    outcome: attempt.outcome,
    rule: attempt.rule ?? null,
    messageId: attempt.headerMessageId ?? null,
    subject: attempt.headerSubject ?? null,
    storedId: attempt.messageId ?? null,
  });
}

export function toWireAttempt(entry: LoggedAttempt): WireSmtpAttempt {
  return {
    at: new Date(entry.at).toISOString(),
    began_at: entry.beganAt === null ? null : new Date(entry.beganAt).toISOString(),
    client_ip: entry.clientIp,
    from: entry.from,
    to: entry.to,
    stage: entry.stage,
    code: entry.code,
    enhanced_code: entry.enhancedCode,
    text: entry.text,
    outcome: entry.outcome,
    rule: entry.rule,
    message_id: entry.messageId,
    subject: entry.subject,
    stored_id: entry.storedId,
  };
}

export class AttemptLog {
  readonly #clock: WallClock;
  readonly #retention: number;
  readonly #maxPerAddress: number;
  readonly #maxEntries: number;
  readonly #byAddress = new Map<string, Slot[]>();
  /** Every slot in arrival order, for expiry and the global cap. */
  #queue: Slot[] = [];
  #head = 0;
  #live = 0;

  constructor(options: AttemptLogOptions) {
    this.#clock = options.clock;
    this.#retention = options.retention;
    this.#maxPerAddress = options.maxPerAddress ?? DEFAULT_MAX_ATTEMPTS_PER_ADDRESS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ATTEMPTS;
  }

  record(attempt: SmtpAttempt): void {
    const slot: Slot = { to: attempt.to, entry: loggedAttempt(attempt) };
    let slots = this.#byAddress.get(attempt.to);
    if (!slots) this.#byAddress.set(attempt.to, (slots = []));
    slots.push(slot);
    this.#queue.push(slot);
    this.#live++;
    if (slots.length > this.#maxPerAddress) this.#forget(slots.shift()!);
    this.#expire();
  }

  /** The address's attempts, oldest first. */
  list(address: string): LoggedAttempt[] {
    this.#expire();
    return (this.#byAddress.get(address) ?? []).map((slot) => slot.entry!);
  }

  /** Forgets the address's attempts (with its mailbox); returns how many there were. */
  delete(address: string): number {
    const slots = this.#byAddress.get(address);
    if (!slots) return 0;
    for (const slot of slots) this.#forget(slot);
    this.#byAddress.delete(address);
    return slots.length;
  }

  /** Entries held, for tests of the bounds. */
  get size(): number {
    return this.#live;
  }

  #forget(slot: Slot): void {
    slot.entry = undefined;
    this.#live--;
  }

  #expire(): void {
    const oldestKept = this.#clock.now() - this.#retention;
    const queue = this.#queue;
    while (this.#head < queue.length) {
      const slot = queue[this.#head]!;
      if (slot.entry !== undefined) {
        if (this.#live <= this.#maxEntries && slot.entry.at > oldestKept) break;
        // The oldest slot of the whole log is the oldest of its address too.
        const slots = this.#byAddress.get(slot.to)!;
        slots.shift();
        if (slots.length === 0) this.#byAddress.delete(slot.to);
        this.#forget(slot);
      }
      this.#head++;
    }
    // Slots removed early (an address's cap, a delete) wait in the queue until
    // its head passes them; squeeze them out once they outnumber the live ones.
    const occupied = queue.length - this.#head;
    if (occupied > 2 * this.#live + 1024) {
      this.#queue = queue.slice(this.#head).filter((slot) => slot.entry !== undefined);
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > queue.length) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
  }
}
