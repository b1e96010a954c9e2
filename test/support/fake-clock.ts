// A virtual monotonic clock for the loop's unit tests: sleeping costs no
// real time, and `run` advances time from one pending timer to the next
// until the promise under test settles.
import type { Clock, RandomSource } from '../../src/wait/clock.js';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #timers: Timer[] = [];
  #seq = 0;
  readonly sleeps: number[] = [];

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      // A timer that falls due lets go of the signal too, as node's timers do:
      // a wait sleeps many times on one signal, and listeners left behind
      // piled up past Node's limit of 10 (MaxListenersExceededWarning in the wait bench).
      const onAbort = () => {
        this.#timers = this.#timers.filter((t) => t !== timer);
        resolve();
      };
      const timer: Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      this.#timers.push(timer);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** When the earliest pending timer falls due; undefined when nothing is scheduled. */
  nextDue(): number | undefined {
    return this.#timers.reduce<number | undefined>((due, timer) => (due === undefined ? timer.at : Math.min(due, timer.at)), undefined);
  }

  /** Moves time forward by `ms` at once, firing timers that fall due. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      await flush();
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers[0];
      if (!next || next.at > until) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.at);
      next.resolve();
    }
    this.#now = until;
    await flush();
  }

  /** Drives virtual time until `promise` settles. */
  async run<T>(promise: Promise<T>, maxSteps = 100_000): Promise<T> {
    let settled = false;
    promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    for (let step = 0; step < maxSteps; step++) {
      await flush();
      if (settled) return promise;
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers.shift();
      if (!next) throw new Error('FakeClock: the promise is pending but nothing is scheduled (deadlock)');
      this.#now = Math.max(this.#now, next.at);
      next.resolve();
    }
    throw new Error('FakeClock: too many steps');
  }
}

async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A seeded PRNG (mulberry32), so "random" schedules are reproducible. */
export function seededRandom(seed: number): RandomSource {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
