// One call with retries: scripted answers. p-retry's backoff sleeps on real
// timers (50 ms and up), so these tests use the system clock unless the
// hard stop is what they prove. Real sockets are in faults.integration.
import { describe, expect, it } from 'vitest';
import { MailroomApiError, MailroomError, isTransient } from '../../src/client/errors.js';
import { callWithRetry } from '../../src/wait/retry.js';
import { systemClock } from '../../src/wait/clock.js';
import { FakeClock } from '../support/fake-clock.js';

const url = 'http://127.0.0.1:8025/api/v1/message/m1?mailbox=a%40mailroom.test';
const refusal = (status: number, slug: string, retryAfterMs?: number) => new MailroomApiError({ method: 'GET', url, status, slug, retryAfterMs });

describe('callWithRetry', () => {
  it('stops after `attempts` failed attempts, and a 429 is not one of them', async () => {
    const clock = systemClock;
    const answers = [refusal(503, 'unavailable'), refusal(429, 'rate_limited', 10), refusal(503, 'unavailable'), refusal(500, 'internal_error'), 'too late'];
    let calls = 0;
    const call = async () => {
      const answer = answers[calls++]!;
      if (answer instanceof Error) throw answer;
      return answer;
    };
    const error = await callWithRetry(call, { clock, hardStop: clock.now() + 60_000, requestTimeout: 5_000, attempts: 3 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ slug: 'internal_error' });
    expect(calls).toBe(4);
  });

  it('reports the last real answer, not the timeout of a last attempt the budget cut short', async () => {
    // Seen under load: a teardown's delete met 503s, and its last attempt,
    // given the few ms left of the budget, timed out; the note said
    // "request timeout of 1 ms" instead of "503 unavailable".
    const clock = systemClock;
    const timeouts: number[] = [];
    const call = async (timeoutMs: number) => {
      timeouts.push(timeoutMs);
      if (timeouts.length === 1) throw refusal(503, 'unavailable');
      await new Promise((resolve) => setTimeout(resolve, timeoutMs));
      throw new MailroomError(`no complete answer within the request timeout of ${timeoutMs} ms`, { slug: 'request_timeout' });
    };
    const error = await callWithRetry(call, { clock, hardStop: clock.now() + 300, requestTimeout: 5_000 }).catch((e: unknown) => e);
    // The second attempt had only what was left of the 300 ms budget, and used it up.
    expect(timeouts).toHaveLength(2);
    expect(timeouts[1]).toBeLessThan(300);
    expect(error).toMatchObject({ slug: 'unavailable', status: 503 });
  });

  it('with no time left, fails at once with a transient request_timeout that a wait handles, not a bare Error', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const error = await clock.run(callWithRetry(async () => ++calls, { clock, hardStop: clock.now(), requestTimeout: 5_000 }).catch((e: unknown) => e));
    expect(calls).toBe(0);
    expect(error).toBeInstanceOf(MailroomError);
    expect(error).toMatchObject({ slug: 'request_timeout' });
    expect(isTransient(error)).toBe(true);
    expect((error as Error).message).toBe('no time was left for the request: the budget (and its grace) ran out before it could start');
  });
});
