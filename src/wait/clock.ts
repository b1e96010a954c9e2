// Time and randomness, injected so the wait loop can be tested exactly.
//
// The loop never reads `Date.now()` or calls `setTimeout` itself: it asks a
// `Clock`. The system clock below is monotonic (`performance.now()`), so a
// machine that corrects its wall time mid-wait cannot stretch or shrink a
// deadline (rule 3 of docs/CONTRACT.md, "The client's nine rules").
import { setTimeout as delay } from 'node:timers/promises';
import type { RandomSource } from '../contract/random.js';

export interface Clock {
  /** Monotonic milliseconds; only differences are meaningful. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds, or early (never rejecting) once
   * `signal` aborts: callers look at the signal themselves after waking.
   */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** A source of uniformly distributed numbers in [0, 1), like `Math.random` (contract/random.ts). */
export type { RandomSource } from '../contract/random.js';

export const systemClock: Clock = Object.freeze({
  now: () => performance.now(),
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (!(ms > 0) || signal?.aborted) return;
    try {
      await delay(ms, undefined, signal ? { signal } : undefined);
    } catch (error) {
      if (!signal?.aborted) throw error;
    }
  },
});

export const systemRandom: RandomSource = Math.random;

/**
 * Sleeps until `clock.now() >= until`. Timers may fire a little early
 * against `performance.now()` (libuv caches its loop time), and a list call
 * one millisecond early costs a 429, so this re-checks and sleeps again.
 */
export async function sleepUntil(clock: Clock, until: number, signal?: AbortSignal): Promise<void> {
  for (let left = until - clock.now(); left > 0 && !signal?.aborted; left = until - clock.now()) {
    await clock.sleep(Math.max(1, Math.ceil(left)), signal);
  }
}
