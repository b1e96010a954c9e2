// Free pages: a walk down a mailbox longer than one listing is charged once.
//
// A list call answers at most 100 messages; a caller that must see further
// down (to its watermark) asks for the page older than the oldest id it got
// (`before_id`). Charging every page against the list budget would make a
// walk of n pages take n seconds. So a page is free when it continues what
// the address's latest listing served: its `before_id` is at or below the
// oldest id that listing (a list call, a long-poll answer, or a free page)
// served, and that listing went out less than one list window ago. A free
// page can only show older mail than the caller already had, so it is no way
// around the floor for new mail; anything else is an ordinary list call.

interface Served {
  /** The oldest id the latest listing served. */
  readonly oldestId: string;
  readonly at: number;
}

const SWEEP_EVERY_MS = 30_000;

export class PageWalks {
  readonly #windowMs: number;
  readonly #clock: { now(): number };
  readonly #served = new Map<string, Served>();
  #lastSweep: number;

  constructor(windowMs: number, clock: { now(): number }) {
    this.#windowMs = windowMs;
    this.#clock = clock;
    this.#lastSweep = clock.now();
  }

  /** True when a page older than `beforeId` continues the mailbox's latest listing, within the window: not charged. */
  isFree(mailbox: string, beforeId: string): boolean {
    const served = this.#served.get(mailbox);
    return served !== undefined && this.#clock.now() - served.at < this.#windowMs && beforeId <= served.oldestId;
  }

  /** Records a listing served for `mailbox` (newest first); an empty one leaves nothing to continue. */
  served(mailbox: string, messages: readonly { readonly id: string }[]): void {
    const now = this.#clock.now();
    this.#sweep(now);
    const oldest = messages.at(-1);
    if (oldest) this.#served.set(mailbox, { oldestId: oldest.id, at: now });
    else this.#served.delete(mailbox);
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, served] of this.#served) if (now - served.at >= this.#windowMs) this.#served.delete(key);
  }
}
