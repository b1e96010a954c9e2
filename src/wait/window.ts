// A wait's window in time: when it started, when it must end, and how far
// past the end its last request may run. Every strategy opens its window
// here, so a wait ends at the same moment whichever strategy runs it, and a
// fallback from one to the other inherits the same deadline.
//
// "Rule N" refers to docs/CONTRACT.md, "The client's nine rules".
import { LIST_INTERVAL_MS } from '../contract/limits.js';
import { describeValue } from '../contract/validation.js';
import { PACING_GUARD_MS } from './pacer.js';
import type { PollOutcome, PollPlan, WaitTally } from './strategy.js';

/** The closing check and its fetch may run this far past the deadline, at most. */
export const MAX_GRACE_MS = 1000;
/** The floor between two list calls as the pacer keeps it. */
export const LIST_FLOOR_MS = LIST_INTERVAL_MS + PACING_GUARD_MS;

/** When a wait started, when it must end, and when its last request must be done. */
export interface WaitWindow {
  readonly startedAt: number;
  readonly deadline: number;
  readonly hardStop: number;
  /** How long the closing check and its fetch may run past the deadline. */
  readonly grace: number;
  /** Milliseconds since `startedAt`. */
  readonly elapsed: () => number;
  /** The outcome of this wait from its tally, with the time spent and why it was cut short. */
  readonly settle: <T>(result: T | undefined, tally: WaitTally) => PollOutcome<T>;
}

/**
 * Rule 3: the deadline is taken once, from a monotonic clock, before the
 * first request. Nothing else in a wait changes how long it lasts. Every
 * strategy opens its window here, so they all end at the same moment.
 */
export function openWaitWindow(plan: PollPlan<unknown>): WaitWindow {
  const { clock } = plan;
  const startedAt = clock.now();
  const deadline = startedAt + plan.budgetMs;
  // The closing check may start at the deadline itself, and a match it finds
  // still has to be fetched: both get a short grace, never more than one
  // request timeout, so no wait outlives its deadline by more than that.
  //
  // A quiet period must be looked at once it is over, and the floor may hold
  // that closing check back by up to one list interval: its hard stop leaves
  // room for that too, as far as one request timeout allows. Beyond that, a
  // short request timeout (under about 2 s) let a quiet period whose closing
  // check failed try again a second later and end over a second past it.
  const grace = Math.min(plan.requestTimeout, MAX_GRACE_MS);
  const hardStop = deadline + (plan.mode === 'quiet' ? Math.min(plan.requestTimeout, grace + LIST_FLOOR_MS) : grace);
  const { signal } = plan;
  const elapsed = () => clock.now() - startedAt;
  const settle = <T>(result: T | undefined, tally: WaitTally): PollOutcome<T> => ({
    result,
    ...tally,
    elapsedMs: elapsed(),
    cutShort: signal?.aborted === true && result === undefined,
    cutShortReason: signal?.aborted ? describeReason(signal.reason) : undefined,
  });
  return { startedAt, deadline, hardStop, grace, elapsed, settle };
}

/** Why a wait was cut short, in words; undefined for a bare abort. */
function describeReason(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) {
    return reason.name === 'AbortError' && /aborted/i.test(reason.message) ? undefined : reason.message;
  }
  return typeof reason === 'string' ? reason : describeValue(reason);
}
