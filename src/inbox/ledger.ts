// What an inbox knows about the mail above its watermark, by id: returned by
// an earlier wait (never returned again), claimed by a running wait (being
// fetched; concurrent waits pass over it), gone (deleted or expired between
// the listing and the fetch), or handled (the `handled` store has it).
//
// A claim ends one of two ways: the mail is returned, or it is released (the
// claiming wait's fetch failed, or the wait was cut). Either way the ledger
// says so to its watchers, so a concurrent wait that passed over the mail as
// claimed looks at it again at once instead of at its next check.
import type { HandledStore } from './handled.js';
import type { SkipReason } from './wait-errors.js';

export class InboxLedger {
  readonly #address: string;
  readonly #handled: HandledStore | undefined;
  readonly #returned = new Set<string>();
  readonly #claimed = new Set<string>();
  readonly #gone = new Set<string>();
  readonly #watchers = new Set<(id: string) => void>();

  constructor(address: string, handled: HandledStore | undefined) {
    this.#address = address;
    this.#handled = handled;
  }

  /** Why a wait must pass over this message, or undefined when it may take it. */
  skipReason(id: string): SkipReason | undefined {
    if (this.#returned.has(id)) return 'returned';
    if (this.#handled?.has(this.#address, id) === true) return 'handled';
    if (this.#gone.has(id)) return 'gone';
    if (this.#claimed.has(id)) return 'claimed';
    return undefined;
  }

  claim(id: string): void {
    this.#claimed.add(id);
  }

  release(id: string): void {
    if (this.#claimed.delete(id)) this.#settled(id);
  }

  /** Calls `watcher` with the id of every claim that ends (returned or released); returns the unsubscribe function. */
  watchClaims(watcher: (id: string) => void): () => void {
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }

  markGone(id: string): void {
    this.#gone.add(id);
  }

  /** A wait returned it: no wait of this inbox (or of the `handled` store's users) takes it again. */
  markReturned(id: string): void {
    this.#returned.add(id);
    this.#handled?.add(this.#address, id);
    if (this.#claimed.has(id)) this.#settled(id);
  }

  #settled(id: string): void {
    for (const watcher of [...this.#watchers]) watcher(id);
  }
}
