// The loop's timing, exactly: a fake monotonic clock, a seeded random
// source and a scripted list call. Real sockets are in the integration tests
// (test/inbox, test/wait/*.integration.test.ts). "Rule N" refers to
// docs/CONTRACT.md, "The client's nine rules".
import { describe, expect, it } from 'vitest';
import { MailroomApiError, MailroomNetworkError } from '../../src/client/errors.js';
import { pacerFor, PACING_GUARD_MS } from '../../src/wait/pacer.js';
import type { MailSummary } from '../../src/client/messages.js';
import { pollMailbox } from '../../src/wait/polling-strategy.js';
import { MAX_GRACE_MS } from '../../src/wait/window.js';
import { type PollEvent, type PollPlan } from '../../src/wait/strategy.js';
import { FakeClock, seededRandom } from '../support/fake-clock.js';

type Step = { readonly after?: number; readonly answer: readonly MailSummary[] | Error };

interface Harness {
  readonly clock: FakeClock;
  readonly t0: number;
  readonly starts: number[];
  readonly timeouts: number[];
  readonly events: PollEvent[];
  plan(overrides?: Partial<PollPlan<string>>): PollPlan<string>;
}

let keys = 0;

/** `script(i)` says how call number i goes: how long it takes and what it answers. */
function harness(script: (call: number) => Step, seed = 1): Harness {
  const clock = new FakeClock();
  const key = `address-${++keys}`;
  const starts: number[] = [];
  const timeouts: number[] = [];
  const events: PollEvent[] = [];
  const t0 = clock.now();
  return {
    clock,
    t0,
    starts,
    timeouts,
    events,
    plan: (overrides = {}) => ({
      mode: 'until-found',
      budgetMs: 30_000,
      clock,
      random: seededRandom(seed),
      requestTimeout: 5_000,
      signal: undefined,
      pacer: () => pacerFor(clock, key),
      list: async (timeout) => {
        const step = script(starts.length);
        starts.push(clock.now() - t0);
        timeouts.push(timeout);
        await clock.sleep(Math.min(step.after ?? 2, timeout));
        if ((step.after ?? 2) > timeout) throw timeoutError();
        if (step.answer instanceof Error) throw step.answer;
        return step.answer;
      },
      inspect: async (messages) => (messages.some((m) => m.subject === 'wanted') ? 'found' : undefined),
      onEvent: (event) => events.push(event),
      ...overrides,
    }),
  };
}

const mail = (subject: string): MailSummary => ({ id: subject, from: 'a@b.example', to: [], subject, preview: '', receivedAt: new Date(0), size: 1 });
const url = 'http://127.0.0.1:8025/api/v1/mailbox?address=x%40mailroom.test';
const refusal = (status: number, slug: string, retryAfterMs?: number) => new MailroomApiError({ method: 'GET', url, status, slug, retryAfterMs });
const timeoutError = () => new MailroomNetworkError({ method: 'GET', url, slug: 'request_timeout', detail: 'no answer' });
const gaps = (starts: readonly number[]) => starts.slice(1).map((s, i) => s - (starts[i] as number));

describe('pollMailbox', () => {
  it('asks at once, before any sleep (rule 2)', async () => {
    const h = harness(() => ({ answer: [mail('wanted')] }));
    const outcome = await h.clock.run(pollMailbox(h.plan()));
    expect(outcome.result).toBe('found');
    expect(h.starts).toEqual([0]);
    expect(h.clock.sleeps.filter((ms) => ms > 2)).toEqual([]);
    expect(outcome).toMatchObject({ checks: 1, failedChecks: 0, refusals: 0, cutShort: false });
  });

  it('sleeps the schedule between checks, measured from the previous answer, never under the floor', async () => {
    const h = harness((i) => ({ after: 30, answer: i === 20 ? [mail('wanted')] : [mail('other')] }), 42);
    const outcome = await h.clock.run(pollMailbox(h.plan({ budgetMs: 120_000 })));
    expect(outcome.result).toBe('found');
    expect(outcome.checks).toBe(21);
    const sleeps = h.events.filter((e): e is Extract<PollEvent, { type: 'sleep' }> => e.type === 'sleep');
    // Every gap between two starts is the request (30 ms) plus the sleep.
    gaps(h.starts).forEach((gap, round) => {
      expect(gap).toBeGreaterThanOrEqual(30 + 1000 + PACING_GUARD_MS);
      // (The fake clock sleeps whole milliseconds, so allow one.)
      expect(Math.abs(gap - (30 + Math.max(sleeps[round]!.ms, 1000 + PACING_GUARD_MS)))).toBeLessThan(1);
    });
    // Rounds 0-14 sleep 1-1.5 s, then 2-3 s, 4-6 s, 8-12 s.
    const ms = sleeps.map((s) => s.ms);
    for (const m of ms.slice(0, 15)) {
      expect(m).toBeGreaterThanOrEqual(1000);
      expect(m).toBeLessThan(1500);
    }
    expect(ms[15]).toBeGreaterThanOrEqual(2000);
    expect(ms[15]).toBeLessThan(3000);
    expect(ms[16]).toBeGreaterThanOrEqual(4000);
    expect(ms[17]).toBeGreaterThanOrEqual(8000);
    expect(ms[19]).toBeLessThan(12000);
  });

  it('spends at most 26 list calls on a failing 90 s wait, closing with a check at the deadline', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const h = harness(() => ({ after: 5, answer: [mail('other')] }), seed);
      const outcome = await h.clock.run(pollMailbox(h.plan({ budgetMs: 90_000 })));
      expect(outcome.result).toBeUndefined();
      expect(h.starts.length).toBeLessThanOrEqual(26);
      expect(h.starts.length).toBeGreaterThanOrEqual(23);
      // The last check is the closing one at the deadline, unless a regular
      // check fell less than the floor before it (then the floor forbids one).
      const last = h.starts.at(-1)!;
      expect(last === 90_000 || (last < 90_000 && last + 5 + 1000 + PACING_GUARD_MS > 90_000)).toBe(true);
      expect(outcome.elapsedMs).toBeLessThanOrEqual(90_000 + MAX_GRACE_MS);
    }
  });

  it('finds mail that arrives in the last stretch through the closing check', async () => {
    // Mail lands at 88 s; the regular schedule has its last check near 86 s.
    const h = harness(() => ({ answer: [] }), 3);
    const arrivesAt = 88_000;
    const plan = h.plan({
      budgetMs: 90_000,
      list: async () => {
        h.starts.push(h.clock.now() - h.t0);
        return h.clock.now() - h.t0 >= arrivesAt ? [mail('wanted')] : [];
      },
    });
    const outcome = await h.clock.run(pollMailbox(plan));
    expect(outcome.result).toBe('found');
    expect(h.starts.at(-2)).toBeLessThan(arrivesAt);
    expect(h.starts.at(-1)).toBe(90_000);
  });

  it('sleeps exactly Retry-After on a 429 and does not count the round (rule 5)', async () => {
    const h = harness((i) => (i === 2 ? { answer: refusal(429, 'rate_limited', 2000) } : { answer: i === 4 ? [mail('wanted')] : [] }), 9);
    const outcome = await h.clock.run(pollMailbox(h.plan()));
    expect(outcome).toMatchObject({ result: 'found', checks: 4, refusals: 1, failedChecks: 0 });
    const refused = h.events.find((e) => e.type === 'refused')!;
    expect(refused).toMatchObject({ retryAfterMs: 2000 });
    // The call after the refusal starts 2 s after the refusal arrived (2 ms request).
    expect(h.starts[3]! - h.starts[2]!).toBe(2 + 2000);
    // Rounds: checks 0, 1, then the refused call is not a round, so the next checks are rounds 2 and 3.
    expect(h.events.filter((e) => e.type === 'check').map((e) => (e as { round: number }).round)).toEqual([0, 1, 2, 3]);
  });

  it('keeps going through 5xx and network failures, counting them as rounds, until the mail comes', async () => {
    const failures = [refusal(503, 'unavailable'), refusal(500, 'internal_error'), timeoutError()];
    const h = harness((i) => (i < 3 ? { answer: failures[i]! } : { answer: [mail('wanted')] }));
    const outcome = await h.clock.run(pollMailbox(h.plan()));
    expect(outcome).toMatchObject({ result: 'found', checks: 1, failedChecks: 3 });
    expect(outcome.lastError).toBe(failures[2]);
    expect(h.starts.length).toBe(4);
  });

  it.each(['unknown_domain', 'invalid_address', 'invalid_request', 'unauthorized'])('stops at once on %s (rule 6)', async (slug) => {
    const status = slug === 'unknown_domain' ? 404 : slug === 'unauthorized' ? 401 : 400;
    const h = harness(() => ({ answer: refusal(status, slug) }));
    await expect(h.clock.run(pollMailbox(h.plan()))).rejects.toMatchObject({ slug, status });
    expect(h.starts).toEqual([0]);
    expect(h.clock.now() - h.t0).toBeLessThan(10);
  });

  it('caps every request by the time left, so nothing outlives the deadline by more than the grace', async () => {
    // Every answer is slower than any timeout: the loop only sees timeouts.
    const h = harness(() => ({ after: 60_000, answer: [] }));
    const outcome = await h.clock.run(pollMailbox(h.plan({ budgetMs: 12_000, requestTimeout: 5_000 })));
    expect(outcome.result).toBeUndefined();
    expect(outcome.checks).toBe(0);
    expect(outcome.failedChecks).toBe(h.starts.length);
    expect(outcome.lastError).toBeInstanceOf(MailroomNetworkError);
    h.starts.forEach((start, i) => expect(start + h.timeouts[i]!).toBeLessThanOrEqual(12_000 + MAX_GRACE_MS));
    expect(h.clock.now() - h.t0).toBeLessThanOrEqual(12_000 + MAX_GRACE_MS);
  });

  it('ends without sleeping when Retry-After reaches past the deadline', async () => {
    const h = harness(() => ({ answer: refusal(429, 'rate_limited', 60_000) }));
    const outcome = await h.clock.run(pollMailbox(h.plan({ budgetMs: 10_000 })));
    expect(outcome).toMatchObject({ result: undefined, refusals: 1, checks: 0 });
    expect(h.clock.now() - h.t0).toBeLessThan(100);
  });

  it('tells the address pacer about a 429, so no list call on the address goes out before Retry-After', async () => {
    const h = harness(() => ({ answer: refusal(429, 'rate_limited', 60_000) }));
    const plan = h.plan({ budgetMs: 10_000 });
    await h.clock.run(pollMailbox(plan));
    // The refusal arrived 2 ms in; nobody lists this address before 60 s after that.
    expect(plan.pacer().earliestStart()).toBe(h.t0 + 2 + 60_000);
  });

  it('is cut short by its signal, mid-sleep, with the reason', async () => {
    const h = harness(() => ({ answer: [] }));
    const controller = new AbortController();
    const pending = pollMailbox(h.plan({ signal: controller.signal }));
    await h.clock.advance(3_500);
    controller.abort(new Error('the test is out of time'));
    const outcome = await pending;
    expect(outcome).toMatchObject({ result: undefined, cutShort: true, cutShortReason: 'the test is out of time' });
    expect(outcome.elapsedMs).toBe(3_500);
    expect(outcome.checks).toBe(h.starts.length);
  });

  it('looks once with a zero budget', async () => {
    const h = harness(() => ({ answer: [mail('wanted')] }));
    expect((await h.clock.run(pollMailbox(h.plan({ budgetMs: 0 })))).result).toBe('found');
    const empty = harness(() => ({ answer: [] }));
    const outcome = await empty.clock.run(pollMailbox(empty.plan({ budgetMs: 0 })));
    expect(outcome.result).toBeUndefined();
    expect(empty.starts).toEqual([0]);
  });

  it('looks once even when the floor holds its first check past a short deadline, at the floor', async () => {
    for (const budgetMs of [500, 0]) {
      const h = harness(() => ({ answer: [mail('wanted')] }));
      const plan = h.plan({ budgetMs });
      // The watermark read just listed this address: the floor is 1005 ms away, after the deadline.
      await h.clock.run(plan.pacer().run(async () => h.clock.sleep(1)));
      const waitStart = h.clock.now();
      const outcome = await h.clock.run(pollMailbox(plan));
      expect(outcome).toMatchObject({ result: 'found', checks: 1 });
      expect(h.starts).toEqual([waitStart - h.t0 + 1000 + PACING_GUARD_MS]);
      // Bounded: one list interval late at most, plus the grace for the request.
      expect(outcome.elapsedMs).toBeLessThanOrEqual(1000 + PACING_GUARD_MS + MAX_GRACE_MS);
    }
  });

  it('makes that one late first look the check at the deadline, and stops after it', async () => {
    const h = harness(() => ({ answer: [mail('other')] }));
    const plan = h.plan({ budgetMs: 500 });
    await h.clock.run(plan.pacer().run(async () => h.clock.sleep(1)));
    const outcome = await h.clock.run(pollMailbox(plan));
    expect(outcome).toMatchObject({ result: undefined, checks: 1, coveredDeadline: true });
    expect(h.starts).toHaveLength(1);
  });

  it('owes no late first look when an earlier strategy of the wait already asked', async () => {
    const h = harness(() => ({ answer: [mail('wanted')] }));
    const plan = h.plan({ budgetMs: 500 });
    await h.clock.run(plan.pacer().run(async () => h.clock.sleep(1)));
    const outcome = await h.clock.run(pollMailbox(plan, { attempted: true }));
    expect(outcome).toMatchObject({ result: undefined, checks: 0 });
    expect(h.starts).toEqual([]);
  });

  describe('quiet mode', () => {
    it('ends with a check at the end of the period and reports that it covered it', async () => {
      const h = harness(() => ({ answer: [] }));
      const outcome = await h.clock.run(pollMailbox(h.plan({ mode: 'quiet', budgetMs: 2_000 })));
      expect(outcome).toMatchObject({ result: undefined, coveredDeadline: true });
      expect(h.starts[0]).toBe(0);
      expect(h.starts.at(-1)).toBeGreaterThanOrEqual(2_000);
    });

    it('waits out the floor for the closing check when the last check was less than a second before the end', async () => {
      const h = harness(() => ({ answer: [] }), 5);
      const outcome = await h.clock.run(pollMailbox(h.plan({ mode: 'quiet', budgetMs: 1_500 })));
      expect(outcome.coveredDeadline).toBe(true);
      gaps(h.starts).forEach((gap) => expect(gap).toBeGreaterThanOrEqual(1000 + PACING_GUARD_MS));
      expect(h.starts.at(-1)).toBeGreaterThanOrEqual(1_500);
    });

    it('still looks after the end when the floor pushed the first check into the last second', async () => {
      const h = harness(() => ({ answer: [] }));
      const plan = h.plan({ mode: 'quiet', budgetMs: 1_000 });
      // Another wait on this address just listed: the floor holds our first check back.
      await h.clock.run(plan.pacer().run(async () => h.clock.sleep(1)));
      await h.clock.advance(10);
      const outcome = await h.clock.run(pollMailbox(plan));
      expect(outcome.coveredDeadline).toBe(true);
      expect(h.starts.length).toBe(2);
      // (starts count from the harness's t0; the wait began 11 ms later)
      expect(h.starts[0]! - 11).toBeLessThan(1_000);
      expect(h.starts[1]! - 11).toBeGreaterThanOrEqual(1_000);
    });

    it('does not call a period quiet when the closing check failed', async () => {
      const h = harness((i) => (i === 0 ? { answer: [] } : { answer: refusal(503, 'unavailable') }));
      const outcome = await h.clock.run(pollMailbox(h.plan({ mode: 'quiet', budgetMs: 3_000 })));
      expect(outcome.coveredDeadline).toBe(false);
      expect(outcome.lastError).toMatchObject({ slug: 'unavailable' });
    });

    it('ends within one request timeout of the end when the closing check failed, however short the request timeout', async () => {
      // The fault matrix's cell "cut the server off for good × expectNoMail":
      // with a 400 ms request timeout the closing check failed at 3 s and the
      // loop tried again at 4 s, a second past deadline + request timeout.
      const h = harness((i) => (i === 0 ? { answer: [] } : { answer: refusal(503, 'unavailable') }));
      const outcome = await h.clock.run(pollMailbox(h.plan({ mode: 'quiet', budgetMs: 3_000, requestTimeout: 400, random: () => 0 })));
      expect(outcome).toMatchObject({ coveredDeadline: false, checks: 1, failedChecks: 2 });
      expect(h.starts).toEqual([0, 1_007, 3_000]);
      expect(outcome.elapsedMs).toBeLessThanOrEqual(3_000 + 400);
    });

    it('stops at the first check that sees matching mail', async () => {
      const h = harness((i) => ({ answer: i === 1 ? [mail('wanted')] : [] }));
      const outcome = await h.clock.run(pollMailbox(h.plan({ mode: 'quiet', budgetMs: 5_000 })));
      expect(outcome.result).toBe('found');
      expect(h.starts.length).toBe(2);
    });
  });
});
