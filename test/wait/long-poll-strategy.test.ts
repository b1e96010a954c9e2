// The server-wait strategy's logic, exactly: a fake monotonic clock and a
// scripted long-poll (how long each hold lasts, what it lists). The real
// long-poll is in long-poll-strategy.integration.test.ts.
import { describe, expect, it } from 'vitest';
import { MailroomApiError, MailroomNetworkError } from '../../src/client/errors.js';
import { pacerFor } from '../../src/wait/pacer.js';
import { longPollStrategy, type HeldListing } from '../../src/wait/long-poll-strategy.js';
import type { MailSummary } from '../../src/client/messages.js';
import type { PollEvent, PollPlan } from '../../src/wait/strategy.js';
import { MAX_GRACE_MS } from '../../src/wait/window.js';
import { FakeClock, seededRandom } from '../support/fake-clock.js';

function summary(id: string, subject: string): MailSummary {
  return { id, subject, from: 'a@b.example', to: [], preview: '', receivedAt: new Date(0), size: 1 };
}

interface Hold {
  readonly sinceId: string | undefined;
  readonly holdMs: number;
  readonly at: number;
  /** The request's own timeout. */
  readonly timeoutMs: number;
}

/** `script(i, holdMs)` says how hold number i goes: after how long, and what it answers (or throws). */
type Script = (i: number, holdMs: number) => { after: number; answer: HeldListing | Error };

let keys = 0;

function harness(script: Script, sinceId: string | undefined = 'w0') {
  const clock = new FakeClock();
  const t0 = clock.now();
  const holds: Hold[] = [];
  const lists: number[] = [];
  const events: PollEvent[] = [];
  const key = `server-wait-${++keys}`;
  const strategy = longPollStrategy({
    sinceId,
    async hold(since, holdMs, _signal, timeoutMs = Number.POSITIVE_INFINITY) {
      const step = script(holds.length, holdMs);
      holds.push({ sinceId: since, holdMs, at: clock.now() - t0, timeoutMs });
      // The request gives up at its timeout, as the client's does.
      await clock.sleep(Math.min(step.after, timeoutMs));
      if (step.after > timeoutMs) throw new MailroomNetworkError({ slug: 'request_timeout', method: 'GET', url: 'http://x/wait', detail: 'no answer' });
      if (step.answer instanceof Error) throw step.answer;
      return step.answer;
    },
  });
  const plan = (overrides: Partial<PollPlan<string>> = {}): PollPlan<string> => ({
    mode: 'until-found',
    budgetMs: 60_000,
    clock,
    random: seededRandom(1),
    requestTimeout: 5_000,
    signal: undefined,
    pacer: () => pacerFor(clock, key),
    list: async () => {
      lists.push(clock.now() - t0);
      await clock.sleep(2);
      return [summary('z9', 'wanted')];
    },
    inspect: async (messages) => (messages.some((m) => m.subject === 'wanted') ? 'found' : undefined),
    onEvent: (event) => events.push(event),
    ...overrides,
  });
  return { clock, holds, lists, events, run: (overrides?: Partial<PollPlan<string>>) => clock.run(strategy.poll(plan(overrides))) };
}

const timedOut = (messages: MailSummary[] = []): HeldListing => ({ messages, timedOut: true });
const woken = (messages: MailSummary[]): HeldListing => ({ messages, timedOut: false });

describe('longPollStrategy', () => {
  it('holds in steps of at most 25 s until the deadline, and its last hold is the check at the deadline', async () => {
    const h = harness((_, holdMs) => ({ after: holdMs, answer: timedOut() }));
    const outcome = await h.run({ budgetMs: 60_000 });
    expect(h.holds.map((x) => x.holdMs)).toEqual([25_000, 25_000, 10_000]);
    expect(h.holds.map((x) => x.at)).toEqual([0, 25_000, 50_000]);
    expect(outcome).toMatchObject({ result: undefined, checks: 3, coveredDeadline: true, elapsedMs: 60_000 });
    expect(h.lists).toEqual([]);
  });

  it('answers as soon as a hold lists the wanted mail', async () => {
    const h = harness(() => ({ after: 1234, answer: woken([summary('m1', 'wanted')]) }));
    const outcome = await h.run();
    expect(outcome).toMatchObject({ result: 'found', checks: 1, elapsedMs: 1234 });
    expect(h.events.filter((e) => e.type === 'check')).toHaveLength(1);
  });

  it('gives a hold that starts late no more time than the hard stop leaves (a quiet period, a short request timeout)', async () => {
    // The fault matrix's cell "answer slower than the request timeout, for
    // good × server wait × expectNoMail": the first hold's answer came 300 ms
    // past the end, the next hold went out with a 0 s hold and a whole
    // request timeout, and the period ended 700 ms past its end.
    const h = harness((i) => (i === 0 ? { after: 3_800, answer: woken([summary('m1', 'other')]) } : { after: 1_000, answer: timedOut() }));
    const outcome = await h.run({ mode: 'quiet', budgetMs: 3_500, requestTimeout: 400 });
    expect(h.holds.map((x) => [x.at, x.holdMs, x.timeoutMs])).toEqual([
      [0, 3_500, 3_900],
      [3_800, 0, 100],
    ]);
    expect(outcome).toMatchObject({ result: undefined, coveredDeadline: false, elapsedMs: 3_900 });
  });

  it('counts each next hold from the newest message the last one listed', async () => {
    const answers = [
      woken([summary('m1', 'other')]),
      woken([summary('m2', 'other'), summary('m1', 'other')]),
      woken([summary('m3', 'wanted'), summary('m2', 'other')]),
    ];
    const h = harness((i) => ({ after: 100, answer: answers[i]! }));
    expect((await h.run()).result).toBe('found');
    expect(h.holds.map((x) => x.sinceId)).toEqual(['w0', 'm1', 'm2']);
  });

  it('lists an unfinished match again: same sinceId, after the polling pause', async () => {
    let calls = 0;
    const h = harness(() => ({ after: 10, answer: woken([summary('m1', 'wanted')]) }));
    const outcome = await h.run({
      inspect: async (_messages, { incomplete }) => {
        if (++calls === 1) {
          incomplete(); // the fetch failed transiently
          return undefined;
        }
        return 'found';
      },
    });
    expect(outcome.result).toBe('found');
    expect(h.holds.map((x) => x.sinceId)).toEqual(['w0', 'w0']);
    const pause = h.holds[1]!.at - 10;
    expect(pause).toBeGreaterThanOrEqual(1000);
    expect(pause).toBeLessThanOrEqual(1500);
  });

  it('looks at its last listing again, at once and without a hold, when passed-over mail is let go of; then counts past it', async () => {
    let wake = () => {};
    let free = false;
    const answers = [woken([summary('m1', 'wanted')]), timedOut([summary('m1', 'wanted')])];
    const h = harness((i, holdMs) => ({ after: i === 0 ? 10 : holdMs, answer: answers[i]! }));
    const inspected: number[] = [];
    // 500 ms in, in the pause after the first hold: the other wait returns m1.
    void h.clock.sleep(500).then(() => {
      free = true;
      wake();
    });
    const outcome = await h.run({
      budgetMs: 20_000,
      watchPassedOver: (w) => ((wake = w), () => (wake = () => {})),
      inspect: async (_messages, { incomplete }) => {
        inspected.push(h.clock.now());
        if (!free) incomplete(); // a concurrent wait holds m1
        return undefined;
      },
    });
    expect(inspected.map((at) => at - inspected[0]!)).toEqual([0, 490, 19_990]);
    // The second hold counts past m1 and starts at the wake, not after the pause.
    expect(h.holds.map((x) => [x.sinceId, x.at])).toEqual([
      ['w0', 0],
      ['m1', 500],
    ]);
    expect(outcome).toMatchObject({ checks: 2, coveredDeadline: true });
  });

  it('falls back to the polling loop on a failed hold, with the rest of the budget, and merges the counts', async () => {
    const h = harness(() => ({ after: 50, answer: new MailroomApiError({ status: 503, slug: 'too_many_waits', method: 'GET', url: 'http://x/wait' }) }));
    const outcome = await h.run({ budgetMs: 10_000 });
    expect(outcome).toMatchObject({ result: 'found', checks: 1, failedChecks: 1 });
    expect(h.holds).toHaveLength(1);
    expect(h.lists).toEqual([50]); // the polling loop asks at once
    expect(h.events.map((e) => e.type)).toEqual(['check-failed', 'check']);
  });

  it('sleeps exactly Retry-After on a 429, counts it as a refusal (not a failure, not a check), and holds again', async () => {
    const answers = [
      { after: 5, answer: new MailroomApiError({ status: 429, slug: 'rate_limited', method: 'GET', url: 'http://x/wait', retryAfterMs: 2_000 }) },
      { after: 10, answer: woken([summary('m1', 'wanted')]) },
    ];
    const h = harness((i) => answers[i]!);
    const outcome = await h.run({ budgetMs: 10_000 });
    expect(outcome).toMatchObject({ result: 'found', checks: 1, failedChecks: 0, refusals: 1, lastError: undefined });
    // The second hold starts exactly Retry-After after the refusal arrived; no fallback to polling.
    expect(h.holds.map((x) => x.at)).toEqual([0, 5 + 2_000]);
    expect(h.holds.map((x) => x.sinceId)).toEqual(['w0', 'w0']);
    expect(h.lists).toEqual([]);
    expect(h.events.map((e) => e.type)).toEqual(['refused', 'sleep', 'check']);
    expect(h.events[1]).toMatchObject({ reason: 'retry-after', ms: 2_000 });
  });

  it('tells the pacer about a 429, so a list call on the address waits out Retry-After too', async () => {
    const refusal = new MailroomApiError({ status: 429, slug: 'rate_limited', method: 'GET', url: 'http://x/wait', retryAfterMs: 3_000 });
    const h = harness(() => ({ after: 5, answer: refusal }));
    // Retry-After reaches past the 2 s budget: the wait ends at once, refused, without sleeping.
    const outcome = await h.run({ budgetMs: 2_000, pacer: () => pacerFor(h.clock, 'told-pacer') });
    expect(outcome).toMatchObject({ result: undefined, checks: 0, failedChecks: 0, refusals: 1, lastError: undefined });
    expect(outcome.elapsedMs).toBe(5);
    expect(pacerFor(h.clock, 'told-pacer').earliestStart()).toBe(h.clock.now() + 3_000);
  });

  it('counts a hold that got no answer on the pacer, so the polling loop keeps the floor from it', async () => {
    const h = harness(() => ({
      after: 300,
      answer: new MailroomNetworkError({ slug: 'network_error', method: 'GET', url: 'http://x/wait', detail: 'socket hang up' }),
    }));
    const outcome = await h.run({ budgetMs: 10_000 });
    expect(outcome.result).toBe('found');
    expect(h.lists[0]).toBeGreaterThanOrEqual(1300);
  });

  describe('never ends later than the deadline plus the grace, whichever path it takes', () => {
    // budget 10 s, request timeout 5 s: the grace is min(5 s, MAX_GRACE_MS) = 1 s.
    const budgetMs = 10_000;
    const latest = budgetMs + MAX_GRACE_MS;
    const nothing = { list: async () => [], inspect: async () => undefined };

    it('a 5xx from a hold that arrives late, then the polling fallback', async () => {
      const h = harness((_, holdMs) => ({
        after: holdMs + 4_000,
        answer: new MailroomApiError({ status: 502, slug: 'unavailable', method: 'GET', url: 'http://x/wait' }),
      }));
      const outcome = await h.run({ budgetMs, ...nothing });
      expect(outcome.result).toBeUndefined();
      expect(outcome.elapsedMs).toBeLessThanOrEqual(latest);
      // The hold's request may run to the deadline plus the grace, no further.
      expect(h.holds[0]!.timeoutMs).toBe(budgetMs + MAX_GRACE_MS);
    });

    it('a hold with no answer at all, then the polling fallback', async () => {
      const h = harness(() => ({ after: Number.POSITIVE_INFINITY, answer: timedOut() }));
      const outcome = await h.run({ budgetMs, ...nothing });
      expect(outcome).toMatchObject({ result: undefined, failedChecks: 1 });
      expect(outcome.elapsedMs).toBeLessThanOrEqual(latest);
    });

    it('a 5xx from a hold just before the deadline, then a slow fallback check', async () => {
      const h = harness((_, holdMs) => ({
        after: holdMs - 10,
        answer: new MailroomApiError({ status: 503, slug: 'unavailable', method: 'GET', url: 'http://x/wait' }),
      }));
      const outcome = await h.run({
        budgetMs,
        inspect: async () => undefined,
        list: async (timeout) => {
          await h.clock.sleep(timeout);
          throw new MailroomNetworkError({ slug: 'request_timeout', method: 'GET', url: 'http://x/list', detail: 'no answer' });
        },
      });
      expect(outcome.result).toBeUndefined();
      expect(outcome.elapsedMs).toBeLessThanOrEqual(latest);
    });
  });

  it('stops at once on invalid_address, unknown_domain and unauthorized, like the polling loop', async () => {
    for (const slug of ['invalid_address', 'unknown_domain', 'unauthorized']) {
      const h = harness(() => ({ after: 5, answer: new MailroomApiError({ status: 400, slug, method: 'GET', url: 'http://x/wait' }) }));
      await expect(h.run()).rejects.toMatchObject({ slug });
      expect(h.lists).toEqual([]);
    }
  });

  it('quiet mode: a hold that ran to the end of the period covers it', async () => {
    const h = harness((_, holdMs) => ({ after: holdMs, answer: timedOut([summary('m0', 'other')]) }));
    const outcome = await h.run({ mode: 'quiet', budgetMs: 5_000, inspect: async () => undefined });
    expect(outcome).toMatchObject({ coveredDeadline: true, checks: 1, elapsedMs: 5_000 });
  });

  it('quiet mode: mail that woke a hold just past the end is followed by one closing hold', async () => {
    const answers = [
      { after: 5_001, answer: woken([summary('m1', 'other')]) },
      { after: 3, answer: timedOut([summary('m1', 'other')]) },
    ];
    const h = harness((i) => answers[i]!);
    const outcome = await h.run({ mode: 'quiet', budgetMs: 5_000, inspect: async () => undefined });
    expect(h.holds.map((x) => x.holdMs)).toEqual([5_000, 0]);
    expect(outcome).toMatchObject({ coveredDeadline: true, checks: 2 });
  });

  it('a zero budget still looks once', async () => {
    const h = harness(() => ({ after: 4, answer: woken([summary('m1', 'wanted')]) }));
    expect((await h.run({ budgetMs: 0 })).result).toBe('found');
    expect(h.holds.map((x) => x.holdMs)).toEqual([0]);
  });

  it('ends when its signal aborts, cut short', async () => {
    const controller = new AbortController();
    const h = harness((_, holdMs) => ({ after: holdMs, answer: timedOut() }));
    const running = h.run({ signal: controller.signal });
    controller.abort(new Error('the test ended'));
    const outcome = await running;
    expect(outcome).toMatchObject({ result: undefined, cutShort: true, cutShortReason: 'the test ended' });
  });
});
