// What the memory store holds, in bytes, against `maxStoreBytes`. A mail to
// several mailboxes is one source shared by its copies, so a source counts
// once, from its first copy stored to its last removed; each copy adds a
// fixed share for its index entries and summary, so 100,000 tiny mails
// count too. An estimate of what the mail costs, not a heap measurement.

/** Bookkeeping charged per stored copy: ids, queue slots, the summary once parsed. */
export const PER_MESSAGE_BYTES = 1024;

/**
 * A shared source as the budget counts it: how many of its copies are
 * stored is kept on the source itself, which costs a field where a map
 * from source to count cost tens of bytes per message (bench/store-bytes.ts).
 */
export interface CountedSource {
  copiesHeld: number;
}

export class ByteBudget {
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  /** A copy of `source` (`size` bytes) is stored. */
  add(source: CountedSource, size: number): void {
    if (source.copiesHeld === 0) this.#bytes += size;
    source.copiesHeld++;
    this.#bytes += PER_MESSAGE_BYTES;
  }

  /** A copy of `source` is gone; the source's bytes go with its last copy. */
  remove(source: CountedSource, size: number): void {
    if (source.copiesHeld === 0) return;
    this.#bytes -= PER_MESSAGE_BYTES;
    if (--source.copiesHeld === 0) this.#bytes -= size;
  }
}
