// Per-address request budgets: a sliding log of the calls it allowed.
//
// A rate of r calls per second allows max(1, floor(r)) calls in any window of
// that many calls / r seconds: 1/s is "one second since the last allowed call"
// (the contract's list floor), 10/s is ten calls in any second, 0.25/s is one
// call every four seconds. Refused calls are not logged, so a refusal never
// pushes the next allowed call further away.
import { Refusal } from '../../contract/refusal.js';
import type { WallClock } from '../base/clock.js';

export type BudgetDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number; readonly retryAfterSeconds: number; readonly sinceLastMs: number };

/**
 * A per-address budget as its callers see it: this process's `Budget`, or
 * one shared by every server on a Redis store (redis/redis-budget.ts).
 * The memory budget answers synchronously; callers await either.
 */
export interface RequestBudget {
  readonly perSecond: number;
  /** The sliding window, in ms: `capacity` calls are allowed in any window this long. */
  readonly windowMs: number;
  readonly capacity: number;
  take(key: string): BudgetDecision | Promise<BudgetDecision>;
  spend(key: string, what: string): void | Promise<void>;
  record(key: string): void | Promise<void>;
}

export function windowOf(perSecond: number): { readonly capacity: number; readonly windowMs: number } {
  const capacity = Math.max(1, Math.floor(perSecond));
  return { capacity, windowMs: (capacity / perSecond) * 1000 };
}

/** The `rate_limited` refusal naming `what` budget of `address` is spent and when to come back. */
export function budgetRefusal(
  budget: Pick<RequestBudget, 'capacity' | 'windowMs'>,
  address: string,
  what: string,
  decision: Exclude<BudgetDecision, { allowed: true }>,
): Refusal {
  const window = budget.windowMs === 1000 ? 'second' : `${budget.windowMs / 1000} s`;
  const allowance = `${budget.capacity} call${budget.capacity === 1 ? '' : 's'} per ${window} per address`;
  return new Refusal(
    429,
    'rate_limited',
    `The ${what} budget of ${address} is spent (${allowance}; the last allowed call was ${(decision.sinceLastMs / 1000).toFixed(3)} s ago). Retry after ${decision.retryAfterSeconds} s; this refusal did not count against the budget`,
    { 'retry-after': String(decision.retryAfterSeconds) },
  );
}

/** A refusal's decision from the wait left, in ms, and the time since the window's last call. */
export function refusedFor(waitMs: number, sinceLastMs: number): Exclude<BudgetDecision, { allowed: true }> {
  // whole seconds, rounded up, never 0: sleeping that long is enough
  return { allowed: false, retryAfterMs: waitMs, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), sinceLastMs };
}

const ALLOWED: BudgetDecision = Object.freeze({ allowed: true });
// Forgetting idle addresses keeps the map as small as the set of active callers.
const SWEEP_EVERY_MS = 30_000;

export class Budget implements RequestBudget {
  readonly perSecond: number;
  readonly #capacity: number;
  readonly #windowMs: number;
  readonly #clock: WallClock;
  readonly #log = new Map<string, number[]>();
  #lastSweep: number;

  constructor(perSecond: number, clock: WallClock) {
    this.perSecond = perSecond;
    ({ capacity: this.#capacity, windowMs: this.#windowMs } = windowOf(perSecond));
    this.#clock = clock;
    this.#lastSweep = clock.now();
  }

  get windowMs(): number {
    return this.#windowMs;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Spends one call for `key` if the budget allows it. */
  take(key: string): BudgetDecision {
    if (this.perSecond === Infinity) return ALLOWED;
    const now = this.#clock.now();
    this.#sweep(now);
    const calls = this.#log.get(key);
    if (!calls) {
      this.#log.set(key, [now]);
      return ALLOWED;
    }
    if (calls.length >= this.#capacity) {
      const oldest = calls[0]!;
      const waitMs = oldest + this.#windowMs - now;
      if (waitMs > 0) {
        return refusedFor(waitMs, now - calls[calls.length - 1]!);
      }
      calls.shift();
    }
    calls.push(now);
    return ALLOWED;
  }

  /**
   * Spends one call of `mailbox`'s budget, or throws the `rate_limited`
   * refusal naming `what` budget it is and when to come back.
   */
  spend(mailbox: string, what: string): void {
    const decision = this.take(mailbox);
    if (!decision.allowed) throw budgetRefusal(this, mailbox, what, decision);
  }

  /**
   * Records a call for `key` now even when the window's calls are spent: the
   * next `take` is then refused for a whole window. For work the caller did
   * not ask for at this moment (a held wait answering because mail arrived)
   * but that must still push the caller's next call back.
   */
  record(key: string): void {
    if (this.perSecond === Infinity) return;
    const now = this.#clock.now();
    this.#sweep(now);
    const calls = this.#log.get(key);
    if (!calls) {
      this.#log.set(key, [now]);
      return;
    }
    calls.push(now);
    while (calls.length > this.#capacity) calls.shift();
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = now;
    for (const [key, calls] of this.#log) {
      if (now - calls[calls.length - 1]! >= this.#windowMs) this.#log.delete(key);
    }
  }
}
