// The server wait when a cut comes before the deadline (a test's own
// timeout, `cutAt`): its hold ends, answered, just before the cut, so the
// failure text counts the check it made; and it starts no hold the service
// could not answer before the cut. A fake clock and a scripted long-poll.
import { describe, expect, it } from 'vitest';
import type { MailSummary } from '../../src/client/messages.js';
import { longPollStrategy, type HeldListing } from '../../src/wait/long-poll-strategy.js';
import { pacerFor } from '../../src/wait/pacer.js';
import type { PollPlan } from '../../src/wait/strategy.js';
import { FakeClock, seededRandom } from '../support/fake-clock.js';

let keys = 0;

/** A hold answers `timed_out` when its time is up, as the service does. */
function harness() {
  const clock = new FakeClock();
  const t0 = clock.now();
  const holds: { at: number; holdMs: number }[] = [];
  const key = `cut-${++keys}`;
  const strategy = longPollStrategy({
    sinceId: 'w0',
    async hold(_sinceId, holdMs, signal): Promise<HeldListing> {
      holds.push({ at: clock.now() - t0, holdMs });
      await clock.sleep(holdMs, signal);
      if (signal?.aborted) throw signal.reason;
      return { messages: [], timedOut: true };
    },
  });
  /** Runs a 30 s wait whose signal fires `cutAfter` ms in. */
  const run = (cutAfter: number, overrides: Partial<PollPlan<string>> = {}) => {
    const controller = new AbortController();
    void clock.sleep(cutAfter).then(() => controller.abort(new Error("the test's own timeout was near")));
    const plan: PollPlan<string> = {
      mode: 'until-found',
      budgetMs: 30_000,
      clock,
      random: seededRandom(1),
      requestTimeout: 5_000,
      signal: controller.signal,
      cutAt: t0 + cutAfter,
      pacer: () => pacerFor(clock, key),
      list: async (): Promise<MailSummary[]> => [],
      inspect: async () => undefined,
      ...overrides,
    };
    return clock.run(strategy.poll(plan));
  };
  return { clock, holds, run, pacer: () => pacerFor(clock, key) };
}

describe('longPollStrategy with a cut before the deadline', () => {
  it('ends its hold shortly before the cut, counts the answer as a check, and holds no more', async () => {
    const h = harness();
    const outcome = await h.run(2_700);
    expect(h.holds).toEqual([{ at: 0, holdMs: 2_400 }]);
    expect(outcome).toMatchObject({ checks: 1, cutShort: true, cutShortReason: "the test's own timeout was near", elapsedMs: 2_700 });
  });

  it('does not hold when the service could not look before the cut (the floor after the watermark read)', async () => {
    const h = harness();
    h.pacer().note(); // the watermark read, just now: the service's next look is a second away
    const outcome = await h.run(900);
    expect(h.holds).toEqual([]);
    expect(outcome).toMatchObject({ checks: 0, cutShort: true, elapsedMs: 900 });
  });

  it('holds to the deadline as usual when the cut comes after it', async () => {
    const h = harness();
    const outcome = await h.run(40_000, { budgetMs: 10_000 });
    expect(h.holds).toEqual([{ at: 0, holdMs: 10_000 }]);
    expect(outcome).toMatchObject({ checks: 1, coveredDeadline: true, cutShort: false });
  });
});
