// The classification table of seed 002, row by row, and Retry-After read
// as seconds or as an HTTP date (on the given clock), capped at a day.
import { describe, expect, it } from 'vitest';
import { classify, retryAfterMs } from '../../src/server/webhooks/classify.js';

const now = Date.UTC(2030, 0, 1, 12, 0, 0);
const answer = (status: number, retryAfter?: string) => classify({ kind: 'answer', status, retryAfter }, now);

describe('classify', () => {
  it.each([200, 201, 202, 204, 299])('%i: delivered', (status) => {
    expect(answer(status)).toEqual({ delivered: true, retry: false, reason: String(status), retryAfterMs: undefined });
  });

  it.each([408, 500, 502, 504, 599])('%i: retried on the backoff', (status) => {
    expect(answer(status, '7')).toEqual({ delivered: false, retry: true, reason: String(status), retryAfterMs: undefined });
  });

  it.each([429, 503])('%i: retried after its Retry-After', (status) => {
    expect(answer(status, '7')).toMatchObject({ retry: true, retryAfterMs: 7_000 });
    expect(answer(status, new Date(now + 90_000).toUTCString())).toMatchObject({ retry: true, retryAfterMs: 90_000 });
    expect(answer(status)).toMatchObject({ retry: true, retryAfterMs: undefined });
    expect(answer(status, 'soon')).toMatchObject({ retry: true, retryAfterMs: undefined });
  });

  it.each([
    [401, 'signature'],
    [403, 'signature'],
    [400, '4xx-not-retried'],
    [404, '4xx-not-retried'],
    [409, '4xx-not-retried'],
    [422, '4xx-not-retried'],
    [301, '301'],
    [302, '302'],
  ])('%i: not retried (%s)', (status, reason) => {
    expect(answer(status)).toEqual({ delivered: false, retry: false, reason, retryAfterMs: undefined });
  });

  it.each(['timeout', 'refused', 'reset', 'network'] as const)('no answer (%s): retried', (reason) => {
    expect(classify({ kind: 'failure', reason, detail: '' }, now)).toEqual({ delivered: false, retry: true, reason, retryAfterMs: undefined });
  });

  it('a cancelled attempt (the webhook was removed) is not retried', () => {
    expect(classify({ kind: 'failure', reason: 'cancelled', detail: '' }, now)).toMatchObject({ retry: false, reason: 'cancelled' });
  });

  it('caps a Retry-After at a day and reads a date in the past as now', () => {
    expect(retryAfterMs('999999', now)).toBe(24 * 60 * 60 * 1000);
    expect(retryAfterMs(new Date(now - 5_000).toUTCString(), now)).toBe(0);
    expect(retryAfterMs(' 2 ', now)).toBe(2_000);
  });
});
