import { describe, expect, it } from 'vitest';
import { FLAT_ROUNDS, MAX_STEP_MS, scheduleDelay, scheduleStep } from '../../src/wait/schedule.js';
import { LIST_INTERVAL_MS } from '../../src/contract/limits.js';
import { seededRandom } from '../support/fake-clock.js';

describe('scheduleStep', () => {
  it('is one second for the first 15 rounds, then 2, 4, 8 s, capped at 8 s', () => {
    const steps = Array.from({ length: 22 }, (_, round) => scheduleStep(round));
    expect(steps.slice(0, FLAT_ROUNDS)).toEqual(Array(15).fill(1000));
    expect(steps.slice(15)).toEqual([2000, 4000, 8000, 8000, 8000, 8000, 8000]);
    expect(scheduleStep(1000)).toBe(MAX_STEP_MS);
  });

  it('matches the seed guide formula: 1.0 if attempt < 15 else min(8.0, 2.0 ** (attempt - 14))', () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const seed = attempt < 15 ? 1 : Math.min(8, 2 ** (attempt - 14));
      expect(scheduleStep(attempt)).toBe(seed * 1000);
    }
  });

  it('refuses a round that is not a non-negative integer', () => {
    expect(() => scheduleStep(-1)).toThrow(TypeError);
    expect(() => scheduleStep(1.5)).toThrow(/non-negative integer/);
  });
});

describe('scheduleDelay', () => {
  it('adds jitter on top of the step and never takes it off', () => {
    expect(scheduleDelay(0, () => 0)).toBe(1000);
    expect(scheduleDelay(0, () => 0.5)).toBe(1250);
    expect(scheduleDelay(17, () => 0.999999)).toBeCloseTo(8000 + 0.999999 * 4000, 6);
    const random = seededRandom(7);
    for (let i = 0; i < 10_000; i++) {
      const round = i % 25;
      const delay = scheduleDelay(round, random);
      expect(delay).toBeGreaterThanOrEqual(scheduleStep(round));
      expect(delay).toBeLessThan(scheduleStep(round) * 1.5);
      expect(delay).toBeGreaterThanOrEqual(LIST_INTERVAL_MS);
    }
  });

  it('names a random source that leaves [0, 1)', () => {
    expect(() => scheduleDelay(0, () => 1)).toThrow(/random source to return a number in \[0, 1\), got 1/);
    expect(() => scheduleDelay(0, () => -0.1)).toThrow(RangeError);
    expect(() => scheduleDelay(0, () => Number.NaN)).toThrow(RangeError);
  });
});
