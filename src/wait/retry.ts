// One call that deserves retries (fetching the matched message, reading the
// watermark, deleting): p-retry, bounded by a hard stop on the caller's clock.
//
// The same rules as the wait loop, for a single call: transient failures
// (5xx, network, timeout) are retried with a short backoff; a 429 sleeps
// exactly Retry-After and is not counted as an attempt; anything else stops
// at once. Every attempt's timeout is capped by the time left.
import pRetry, { AbortError } from 'p-retry';
import type { Clock } from './clock.js';
import { MailroomApiError, MailroomError, asError, isTransient } from '../client/errors.js';

export interface RetryOptions {
  readonly clock: Clock;
  /** No attempt may run past this moment (`clock.now()` scale). */
  readonly hardStop: number;
  readonly requestTimeout: number;
  readonly signal?: AbortSignal | undefined;
  /** At most this many attempts (a 429 is not one); 21 by default, the hard stop governs. */
  readonly attempts?: number | undefined;
}

/** Runs `call(timeoutMs)` until it succeeds, fails for good, or time is up. */
export async function callWithRetry<T>(call: (timeoutMs: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const { clock, hardStop, requestTimeout, signal, attempts = 21 } = options;
  let lastError: unknown;
  return pRetry(
    async () => {
      const left = hardStop - clock.now();
      // Out of time before a first attempt: a transient condition like a
      // request timeout that came early, so a wait treats it as a fetch that
      // did not get through (and fails with its own message), never as a
      // reason to stop.
      if (left < 1) throw new AbortError(lastError === undefined ? outOfTime() : asError(lastError));
      const timeout = Math.min(requestTimeout, left);
      try {
        return await call(timeout);
      } catch (error) {
        if (signal?.aborted || !isTransient(error)) throw new AbortError(asError(error));
        // An attempt the budget cut short that then timed out only says the
        // time ran out; the answer before it (a 503, say) says why the call
        // failed, so that is what the caller hears. No time is left anyway.
        if (lastError !== undefined && timeout < requestTimeout && isRequestTimeout(error)) throw new AbortError(asError(lastError));
        lastError = error;
        throw error;
      }
    },
    {
      retries: Math.max(0, attempts - 1),
      minTimeout: 50,
      factor: 2,
      maxTimeout: 1000,
      randomize: true,
      maxRetryTime: Math.max(0, hardStop - clock.now()),
      ...(signal ? { signal } : {}),
      shouldConsumeRetry: ({ error }) => !isRateLimit(error),
      async onFailedAttempt({ error }) {
        if (!isRateLimit(error)) return;
        const wait = error.retryAfterMs ?? 1000;
        // A Retry-After that ends after the hard stop cannot be honoured in
        // time; give up now with the refusal rather than sleep for nothing.
        if (clock.now() + wait > hardStop) throw error;
        await clock.sleep(wait, signal);
      },
    },
  );
}

function outOfTime(): MailroomError {
  return new MailroomError('no time was left for the request: the budget (and its grace) ran out before it could start', { slug: 'request_timeout' });
}

function isRequestTimeout(error: unknown): boolean {
  return error instanceof MailroomError && error.slug === 'request_timeout';
}

function isRateLimit(error: unknown): error is MailroomApiError {
  return error instanceof MailroomApiError && error.status === 429;
}
