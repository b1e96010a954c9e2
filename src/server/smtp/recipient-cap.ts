// Recipients per SMTP transaction, capped. Without a cap one DATA to 100,000
// addresses stores 100,000 copies' worth of index entries and evicts every
// other test's mail through the global cap. RFC 5321 (4.5.3.1.8) asks a
// server to take at least 100; past the cap each RCPT is answered `452
// 4.5.3` and the client sends the rest in another transaction.
//
// The count is of distinct addresses, kept in a Set per transaction (a
// repeated RCPT replaces its earlier entry, as smtp-server does, and is
// taken again even at the cap): each RCPT costs one lookup, never a scan.

export class RecipientCap {
  readonly #max: number;
  #accepted = new Set<string>();

  constructor(max: number) {
    this.#max = max;
  }

  /** A new transaction (MAIL FROM) starts with none. */
  reset(): void {
    this.#accepted = new Set();
  }

  /** The `452 4.5.3` reply for a RCPT of `address` past the cap, or undefined when it may be taken. */
  refusal(address: string): string | undefined {
    if (this.#accepted.size < this.#max || this.#accepted.has(address.toLowerCase())) return undefined;
    return `4.5.3 Too many recipients: at most ${this.#max} per transaction; send to the rest in another transaction`;
  }

  /** A RCPT of `address` was accepted. */
  accepted(address: string): void {
    this.#accepted.add(address.toLowerCase());
  }
}
