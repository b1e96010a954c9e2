// Exponential backoff with a cap and one-sided jitter, as pure functions:
// the shape the client's wait schedule (wait/schedule.ts) and the embedded
// server's webhook retries (server/webhooks/) share, so the two halves can
// never disagree about what "jitter only adds" means.
//
//   step  = min(maxDelay, initialDelay * factor^(retry - 1))
//   delay = step + random(0 .. step/2)
//
// The cap applies to the step; the jitter is added on top of it, so a
// capped delay still spreads callers that failed together (seed 004), and
// no delay is ever shorter than its step.
import type { RandomSource } from './random.js';

export interface ExponentialBackoff {
  /** The step before the first retry, in ms. */
  readonly initialDelayMs: number;
  /** Each further step is this many times the one before (at least 1). */
  readonly factor: number;
  /** The largest step, in ms: the cap, before jitter. */
  readonly maxDelayMs: number;
}

/** The step before retry number `retry` (1 = the first retry), without jitter. */
export function backoffStep(policy: ExponentialBackoff, retry: number): number {
  if (!Number.isInteger(retry) || retry < 1) throw new TypeError(`Expected \`retry\` to be a whole number from 1, got ${String(retry)}`);
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (retry - 1));
}

/** `step` plus a one-sided jitter of up to half of it, drawn from `random`. */
export function withJitter(step: number, random: RandomSource): number {
  const draw = random();
  if (!(draw >= 0 && draw < 1)) {
    throw new RangeError(`Expected the random source to return a number in [0, 1), got ${String(draw)}`);
  }
  return step + draw * (step / 2);
}
