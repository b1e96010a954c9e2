// What the memory store holds, in bytes, against `maxStoreBytes`. A mail to
// several mailboxes is one source shared by its copies, so a source counts
// once, from its first copy stored to its last removed; each copy adds a
// fixed share for its index entries and summary, so 100,000 tiny mails
// count too. An estimate of what the mail costs, not a heap measurement.

/** Bookkeeping charged per stored copy: ids, queue slots, the summary once parsed. */
export const PER_MESSAGE_BYTES = 1024;

export class ByteBudget {
  /** Copies still stored, per shared source. */
  readonly #copies = new Map<object, number>();
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  /** A copy of `source` (`size` bytes) is stored. */
  add(source: object, size: number): void {
    const copies = this.#copies.get(source) ?? 0;
    if (copies === 0) this.#bytes += size;
    this.#copies.set(source, copies + 1);
    this.#bytes += PER_MESSAGE_BYTES;
  }

  /** A copy of `source` is gone; the source's bytes go with its last copy. */
  remove(source: object, size: number): void {
    const copies = this.#copies.get(source);
    if (copies === undefined) return;
    this.#bytes -= PER_MESSAGE_BYTES;
    if (copies > 1) this.#copies.set(source, copies - 1);
    else {
      this.#copies.delete(source);
      this.#bytes -= size;
    }
  }
}
