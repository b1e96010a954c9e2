// What one attempt's result means (seed 002, "decide which codes mean
// accept and stop, retry, and do not retry"):
//
//   2xx                                  delivered
//   408, 429, 5xx                        retried (429 and 503 after their Retry-After)
//   timeout, reset, refused, network     retried
//   unavailable                          retried (the event's message could not be read from the store)
//   gone                                 not retried (the event's mail expired, was evicted or deleted: nothing of it is left to send)
//   destination                          not retried (the URL's name resolved to an address the destination policy refuses: nothing was sent)
//   lost                                 retried (on a shared store: the server making the attempt stopped before its outcome was known)
//   401, 403                             not retried: `signature` (the receiver refused the signature)
//   any other 4xx                        not retried: `4xx-not-retried` (the request itself is wrong)
//   1xx, 3xx                             not retried, logged by their status
//
// Redirects are not followed: a webhook URL that moved is a configuration
// to fix, and following it would send the signed body somewhere unchosen.
import { WEBHOOK_LIMITS } from '../../contract/webhooks.js';

/** What came back of one attempt, as the sender saw it. */
export type AttemptResult =
  | { readonly kind: 'answer'; readonly status: number; readonly retryAfter: string | undefined }
  | {
      readonly kind: 'failure';
      readonly reason: 'timeout' | 'refused' | 'reset' | 'network' | 'unavailable' | 'gone' | 'destination' | 'lost' | 'cancelled';
      readonly detail: string;
    };

export interface Verdict {
  readonly delivered: boolean;
  readonly retry: boolean;
  /** The one-word reason for the log (contract/webhooks.ts). */
  readonly reason: string;
  /** The receiver's `Retry-After`, in ms, when it gave a readable one with a 429 or 503. */
  readonly retryAfterMs: number | undefined;
}

/** `Retry-After` in ms: whole seconds or an HTTP date, at most a day; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d{1,10}$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, WEBHOOK_LIMITS.maxRetryAfterMs);
}

/** Failures another attempt would not change. */
const NOT_RETRIED = new Set<string>(['cancelled', 'gone', 'destination']);

export function classify(result: AttemptResult, now: number): Verdict {
  if (result.kind === 'failure') {
    return { delivered: false, retry: !NOT_RETRIED.has(result.reason), reason: result.reason, retryAfterMs: undefined };
  }
  const { status } = result;
  const reason = String(status);
  if (status >= 200 && status < 300) return { delivered: true, retry: false, reason, retryAfterMs: undefined };
  if (status === 429 || status === 503) return { delivered: false, retry: true, reason, retryAfterMs: retryAfterMs(result.retryAfter, now) };
  if (status === 408 || status >= 500) return { delivered: false, retry: true, reason, retryAfterMs: undefined };
  if (status < 400) return { delivered: false, retry: false, reason, retryAfterMs: undefined };
  if (status === 401 || status === 403) return { delivered: false, retry: false, reason: 'signature', retryAfterMs: undefined };
  return { delivered: false, retry: false, reason: '4xx-not-retried', retryAfterMs: undefined };
}
