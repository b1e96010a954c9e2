// The contract's reference schedule (docs/CONTRACT.md, "The client's nine
// rules"; "rule N" below refers to those), as pure functions.
//
//   step = 1 s for the first 15 rounds, then doubling (2, 4, 8 s) up to 8 s
//   delay = step + random(0 .. step/2)
//
// The exponent is shifted so the widening starts after the flat stretch:
// a signup mail that takes twelve seconds is still seen within a second of
// arriving. Jitter is only ever added: the list endpoint allows one call per
// second per address, so a delay below the step would be refused (rule 4).
import { withJitter } from '../contract/backoff.js';
import { LIST_INTERVAL_MS } from '../contract/limits.js';
import type { RandomSource } from './clock.js';
/** Rounds spent at the floor before the interval starts to widen. */
export const FLAT_ROUNDS = 15;
/** The widest step, so the second half of a long wait is not spent asleep. */
export const MAX_STEP_MS = 8000;

/** The step after check number `round` (0-based), without jitter. */
export function scheduleStep(round: number): number {
  if (!Number.isInteger(round) || round < 0) {
    throw new TypeError(`Expected \`round\` to be a non-negative integer, got ${String(round)}`);
  }
  if (round < FLAT_ROUNDS) return LIST_INTERVAL_MS;
  return Math.min(MAX_STEP_MS, LIST_INTERVAL_MS * 2 ** (round - FLAT_ROUNDS + 1));
}

/**
 * How long to sleep after check number `round` before the next one: the
 * step plus a one-sided jitter of up to half a step, never less than the step.
 */
export function scheduleDelay(round: number, random: RandomSource): number {
  // The jitter is the one the webhook retries use too (contract/backoff.ts).
  return withJitter(scheduleStep(round), random);
}
