// Logging what the global cap pushed out. The first eviction is reported at
// once; under sustained pressure the rest are summarised at most every 10 s,
// so a full store cannot flood the log.
import type { Logger } from '../base/log.js';
import type { WallClock } from '../base/clock.js';
import type { StoredMessage } from './message-store.js';

const SUMMARY_INTERVAL_MS = 10_000;

export class EvictionReporter {
  readonly #clock: WallClock;
  readonly #logger: Logger;
  readonly #maxMessages: number;
  readonly #maxStoreBytes: number | undefined;
  #lastReport = -Infinity;
  #pending = 0;
  #lastVictim: StoredMessage | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { clock: WallClock; logger: Logger; maxMessages: number; maxStoreBytes?: number | undefined }) {
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#maxMessages = options.maxMessages;
    this.#maxStoreBytes = options.maxStoreBytes;
  }

  record(message: StoredMessage): void {
    this.#pending++;
    this.#lastVictim = message;
    if (this.#clock.now() - this.#lastReport >= SUMMARY_INTERVAL_MS) this.flush();
    // held-back evictions are reported even if no further eviction comes along
    else this.#timer ??= setTimeout(() => this.flush(), SUMMARY_INTERVAL_MS).unref();
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const victim = this.#lastVictim;
    if (this.#pending === 0 || !victim) return;
    const count = this.#pending;
    this.#pending = 0;
    this.#lastReport = this.#clock.now();
    const received = new Date(victim.receivedAt).toISOString();
    const caps = `maxMessages ${this.#maxMessages}${this.#maxStoreBytes !== undefined && this.#maxStoreBytes !== Infinity ? `, maxStoreBytes ${this.#maxStoreBytes}` : ''}`;
    this.#logger.warn(
      count === 1
        ? `mailroom: store full (${caps}): evicted the oldest message, ${victim.id} for ${victim.mailbox} received ${received}`
        : `mailroom: store full (${caps}): evicted the ${count} oldest messages, the last ${victim.id} for ${victim.mailbox} received ${received}`,
    );
  }
}
