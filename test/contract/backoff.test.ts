// The backoff both halves share: the capped exponential step and the
// one-sided jitter on top of it, exactly, with a fixed random source.
import { describe, expect, it } from 'vitest';
import { backoffStep, withJitter } from '../../src/contract/backoff.js';
import { DEFAULT_WEBHOOK_RETRY } from '../../src/contract/webhooks.js';
import { scheduleDelay, scheduleStep } from '../../src/wait/schedule.js';

describe('backoff', () => {
  const policy = { initialDelayMs: 200, factor: 2, maxDelayMs: 2_000 };

  it('grows by the factor from the first retry and stops growing at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 10].map((retry) => backoffStep(policy, retry))).toEqual([200, 400, 800, 1600, 2000, 2000, 2000]);
  });

  it('has the seed shape by default: about 1, 5, 25 minutes, then the 30-minute cap', () => {
    expect([1, 2, 3, 4].map((retry) => backoffStep(DEFAULT_WEBHOOK_RETRY, retry) / 60_000)).toEqual([1, 5, 25, 30]);
  });

  it('adds jitter of 0 up to half a step, never subtracts, and refuses a broken random source', () => {
    expect(withJitter(1000, () => 0)).toBe(1000);
    expect(withJitter(1000, () => 0.5)).toBe(1250);
    expect(withJitter(1000, () => 0.999)).toBeCloseTo(1499.5);
    expect(() => withJitter(1000, () => 1)).toThrow('Expected the random source to return a number in [0, 1), got 1');
    expect(() => withJitter(1000, () => -0.1)).toThrow(RangeError);
    expect(() => backoffStep(policy, 0)).toThrow('Expected `retry` to be a whole number from 1, got 0');
  });

  it('is the jitter of the client wait schedule too', () => {
    for (const round of [0, 14, 15, 18, 30]) expect(scheduleDelay(round, () => 0.5)).toBe(withJitter(scheduleStep(round), () => 0.5));
  });
});
