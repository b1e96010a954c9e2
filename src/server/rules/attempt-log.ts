// The attempt log: every SMTP attempt that named an address as a recipient,
// per address, oldest first, as plain records (what a store would keep). It
// is filled from the attempt feed (base/smtp-attempts.ts), kept as long as mail is
// (the server's retention), and deleted with the mailbox. Bounded three ways:
// entries older than the retention go, each address keeps its newest
// `maxPerAddress`, and the whole log its newest `maxEntries`. An entry is
// kept as a short string (attempt-entry.ts), read back into an attempt when
// listed: lists are rare, and every mail adds an entry.
import type { WireSmtpAttempt } from '../../contract/wire.js';
import type { WallClock } from '../base/clock.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import { decodeAttemptEntry, encodeAttemptEntry } from './attempt-entry.js';

/** An entry of the log: the attempt as the feed published it. */
export type LoggedAttempt = SmtpAttempt;

/** The Message-ID and Subject of a stored message, for an accepted attempt's entry (read from the store). */
export type StoredIdentity = (
  to: string,
  storedId: string,
) => Promise<{ readonly messageId: string | undefined; readonly subject: string | undefined } | undefined>;

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
  readonly at: number;
  /** The attempt (attempt-entry.ts); undefined once removed from its address (cap, delete) before the whole log's queue reached it. */
  entry: string | undefined;
}

/** An entry as the API shows it; an accepted one's headers come from the stored message while it is there. */
export async function toWireAttempt(entry: LoggedAttempt, stored: StoredIdentity): Promise<WireSmtpAttempt> {
  const identity = entry.messageId !== undefined && entry.headerMessageId === undefined ? await stored(entry.to, entry.messageId) : undefined;
  return {
    at: new Date(entry.at).toISOString(),
    began_at: entry.beganAt === undefined ? null : new Date(entry.beganAt).toISOString(),
    client_ip: entry.clientIp,
    from: entry.from,
    to: entry.to,
    stage: entry.stage,
    code: entry.code ?? null,
    enhanced_code: entry.enhancedCode ?? null,
    text: entry.text,
    outcome: entry.outcome,
    rule: entry.rule ?? null,
    message_id: entry.headerMessageId ?? identity?.messageId ?? null,
    subject: entry.headerSubject ?? identity?.subject ?? null,
    stored_id: entry.messageId ?? null,
    provider: entry.provider ?? null,
    user_agent: entry.userAgent ?? null,
    retry_after_ms: entry.retryAfterMs ?? null,
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
    const slot: Slot = { to: attempt.to, at: attempt.at, entry: encodeAttemptEntry(attempt) };
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
    return (this.#byAddress.get(address) ?? []).map((slot) => decodeAttemptEntry(slot.entry!, slot.to));
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
        if (this.#live <= this.#maxEntries && slot.at > oldestKept) break;
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
