// The webhook envelope's `created_at` (webhooks/events.ts `isoDate`) reuses
// the text of the second it last formatted: it must be what
// `toISOString()` gives, byte for byte, in any order of calls.
import { describe, expect, it } from 'vitest';
import { isoDate } from '../../src/server/webhooks/events.js';
import { seededRandom } from '../support/fake-clock.js';

describe('isoDate', () => {
  it('is toISOString, in a burst, across seconds, and at the edges of the range', () => {
    const random = seededRandom(45);
    const now = Date.UTC(2026, 11, 7, 23, 59, 59, 990);
    const times = [0, 1, 9, 10, 99, 100, 999, 1000, -1, -999, -1000, -1001, 8.64e15, -8.64e15, 253402300799999, 253402300800000, now, now + 9, now + 10];
    for (let i = 0; i < 20_000; i++) times.push(now + Math.floor(random() * 5_000) - 2_500);
    for (let i = 0; i < 2_000; i++) times.push(Math.floor((random() - 0.5) * 2 * 8.64e15));
    for (const ms of times) expect(isoDate(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('formats a fractional time in full, and throws as toISOString does for one out of range', () => {
    expect(isoDate(1.5)).toBe(new Date(1.5).toISOString());
    expect(() => isoDate(Number.NaN)).toThrow(RangeError);
    expect(() => isoDate(8.64e15 + 1)).toThrow(RangeError);
  });
});
