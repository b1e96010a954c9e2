// Client-side pacing of list calls, per address (rule 4 of docs/CONTRACT.md,
// "The client's nine rules"; "rule N" below refers to those too).
//
// The service allows a list call when at least one second has passed since
// its last allowed list call for that address. A correct client never earns
// a 429 from its own calls, so every list call this process makes for an
// address - the watermark read, every check of every wait, `messages()` -
// goes through one pacer for that address and starts no sooner than one
// second after the previous one *settled*.
//
// Why "settled" and not "sent": the server stamps a call when it receives
// it, which is some time after we sent it and before we got the answer. The
// moment the answer (or the failure) reached us is the latest the server can
// have stamped the previous call, so a gap measured from there is a gap the
// server sees too, whatever the network latency did. A failed call (reset,
// timeout) may or may not have been counted by the server; counting it is
// the safe side.
import { sleepUntil, type Clock } from './clock.js';
import { LIST_INTERVAL_MS } from '../contract/limits.js';

/**
 * Added to the one-second floor: the server may stamp with a millisecond
 * clock that rounds, and a call one millisecond early is a 429.
 */
export const PACING_GUARD_MS = 5;

export const TOO_LATE: unique symbol = Symbol('too late');

export class ListPacer {
  readonly #clock: Clock;
  readonly #intervalMs: number;
  #lastSettledAt = Number.NEGATIVE_INFINITY;
  /** A 429's Retry-After: no list call before this moment. */
  #notBefore = Number.NEGATIVE_INFINITY;
  #busy: Promise<void> | undefined;

  constructor(clock: Clock, intervalMs = LIST_INTERVAL_MS + PACING_GUARD_MS) {
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** The earliest moment the next list call may start, ignoring calls in flight. */
  earliestStart(): number {
    return Math.max(this.#lastSettledAt + this.#intervalMs, this.#notBefore);
  }

  /** When the last list call for this address settled (-Infinity if none). */
  get lastSettledAt(): number {
    return this.#lastSettledAt;
  }

  /** True when no list call is in flight and the floor has passed: forgetting this pacer loses nothing. */
  isIdle(): boolean {
    return this.#busy === undefined && this.#clock.now() >= this.earliestStart();
  }

  /**
   * A server-side wait (a hold) is about to be sent. The service counts it as
   * a list call when it first looks at the mailbox: on arrival, or at the
   * floor when the floor has not passed (it defers the look, never refuses
   * it). That look is counted here, at the moment the service will make it,
   * so no list call of this address - another wait's check, `messages()` -
   * goes out within the floor of it while the hold is held. A list call in
   * flight is waited for first, since its stamp sets when the look can be.
   * Returns that moment, and `unlook()` for a hold the service refused
   * before looking (`too_many_waits`); aborting `signal` stops the wait for
   * the turn.
   */
  async holdStarts(signal?: AbortSignal): Promise<{ readonly lookAt: number; readonly unlook: () => void }> {
    while (this.#busy) {
      await raceAbort(this.#busy, signal);
      // No hold will be sent: nothing to count.
      if (signal?.aborted) return { lookAt: this.#clock.now(), unlook: () => {} };
    }
    const before = this.#lastSettledAt;
    const lookAt = Math.max(this.#clock.now(), this.earliestStart());
    this.#lastSettledAt = Math.max(before, lookAt);
    return {
      lookAt,
      unlook: () => {
        // Only while nothing else was counted since.
        if (this.#lastSettledAt === lookAt) this.#lastSettledAt = before;
      },
    };
  }

  /**
   * Records a call on the address's list budget that did not go through
   * `run` - a hold's answer, which the service counts as a list call when
   * mail woke it - so the next list call keeps its floor from it.
   */
  note(): void {
    this.#lastSettledAt = Math.max(this.#lastSettledAt, this.#clock.now());
  }

  /**
   * Records a 429 on the address's list budget: no list call may start
   * before `at` (now plus Retry-After), whoever makes it (rule 5).
   */
  refusedUntil(at: number): void {
    this.#notBefore = Math.max(this.#notBefore, at);
  }

  /**
   * Runs one list call at the earliest moment the floor allows, one at a
   * time per address. Gives up with `TOO_LATE` (without calling `call`) when
   * that moment would be after `notAfter`, and returns `TOO_LATE` as well
   * when `signal` aborts while waiting for the turn.
   */
  async run<T>(call: () => Promise<T>, options: { notAfter?: number; signal?: AbortSignal } = {}): Promise<T | typeof TOO_LATE> {
    const { notAfter = Number.POSITIVE_INFINITY, signal } = options;
    for (;;) {
      while (this.#busy) {
        await raceAbort(this.#busy, signal);
        if (signal?.aborted) return TOO_LATE;
      }
      const startAt = this.earliestStart();
      if (startAt > notAfter) return TOO_LATE;
      await sleepUntil(this.#clock, startAt, signal);
      if (signal?.aborted) return TOO_LATE;
      // Another caller may have taken the turn while we slept.
      if (this.#busy || this.#clock.now() < this.earliestStart()) continue;

      let release!: () => void;
      this.#busy = new Promise<void>((resolve) => (release = resolve));
      try {
        return await call();
      } finally {
        // A hold registered meanwhile may have counted a look later than now.
        this.#lastSettledAt = Math.max(this.#lastSettledAt, this.#clock.now());
        this.#busy = undefined;
        release();
      }
    }
  }
}

function raceAbort(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void promise.then(done, done);
  });
}

// One pacer per clock and address key. The registry is process-wide on
// purpose: two inboxes watching one address must share its budget. Keys of
// idle pacers are dropped now and then so a long run does not accumulate
// one entry per address it ever saw.
const registry = new WeakMap<Clock, Map<string, ListPacer>>();
const PRUNE_EVERY = 256;
let lookupsSincePrune = 0;

export function pacerFor(clock: Clock, key: string): ListPacer {
  let pacers = registry.get(clock);
  if (!pacers) registry.set(clock, (pacers = new Map<string, ListPacer>()));
  if (++lookupsSincePrune >= PRUNE_EVERY) {
    lookupsSincePrune = 0;
    for (const [k, p] of pacers) if (k !== key && p.isIdle()) pacers.delete(k);
  }
  let pacer = pacers.get(key);
  if (!pacer) pacers.set(key, (pacer = new ListPacer(clock)));
  return pacer;
}
