// The long-poll strategy: when the service advertises a long-poll, the wait
// holds one request open instead of sleeping between list calls, and the
// service answers the moment mail arrives. "Rule N" refers to
// docs/CONTRACT.md, "The client's nine rules".
//
// It is a `WaitStrategy` (strategy.ts): the same plan in, the same outcome
// out, every answer handed to the same `inspect`. So the deadline, the
// watermark walk, the filters, exactly-once and the failure text stay where
// they are, in the callers. What changes is only how a check is made:
//
// - Each hold asks for "anything newer than `sinceId`" with no server-side
//   filter, so any new message wakes it and the client filters as usual
//   (RegExp and predicate filters included). The answer is the mailbox's
//   listing at that moment, newest first; after `inspect` has looked at it,
//   the next hold counts from its newest id.
// - A hold lasts until the deadline (at most 25 s, then another one), so
//   a hold that times out is itself the check at the deadline. When the
//   wait will be cut before its deadline (`cutAt`, a test's own timeout),
//   the hold ends a little before the cut instead: its answer is a check the
//   wait really made, where a hold aborted by the cut would be none.
// - Anything but an answer - slots full (`too_many_waits`), a 5xx, a reset,
//   a timeout, a malformed answer, a route that is not there - hands the rest
//   of the budget to the polling loop, which knows how to ride those out.
//   Only the slugs that mean "this address can never be listed" stop the wait
//   at once (rule 6), since the polling loop would be refused the same way.
// - A 429 (`rate_limited`) is not a failure and not a check (rule 5): the
//   wait sleeps exactly Retry-After, counts it in `refusals`, tells the
//   address's pacer (so no list call of any wait goes out sooner), and then
//   holds again. Falling back to polling would gain nothing: the list call
//   draws on the same budget and would wait out the same Retry-After.
import { MAX_HOLD_MS } from '../client/client.js';
import { MailroomApiError, MailroomNetworkError, asError } from '../client/errors.js';
import type { MailSummary } from '../client/messages.js';
import { ADDRESS_REFUSALS } from '../contract/refusal.js';
import { sleepUntil } from './clock.js';
import { MIN_REQUEST_MS, pollMailbox } from './polling-strategy.js';
import { scheduleDelay } from './schedule.js';
import type { PollOutcome, PollPlan, WaitStrategy } from './strategy.js';
import { Wakeup } from './wakeup.js';
import { openWaitWindow } from './window.js';

export interface HeldListing {
  /** Newest first: the mailbox when the hold was answered. */
  readonly messages: readonly MailSummary[];
  /** True when the hold ran out of time rather than being woken by mail. */
  readonly timedOut: boolean;
}

export interface LongPoll {
  /** Where the first hold counts from (the inbox's watermark); undefined counts every message. */
  readonly sinceId: string | undefined;
  /**
   * One long-poll: held until a message newer than `sinceId` is listed, or
   * `holdMs` passed. `timeoutMs` is the request's own timeout: it ends by
   * the wait's hard stop, so a late answer cannot carry the wait past it.
   * `lookDelayMs`: how long the first look must wait for the address's
   * floor (rule 4); the embedded server defers it itself, a hold made on the
   * client (a catcher's push stream) waits it out.
   */
  hold(sinceId: string | undefined, holdMs: number, signal: AbortSignal | undefined, timeoutMs: number, lookDelayMs: number): Promise<HeldListing>;
}

export function longPollStrategy(longPoll: LongPoll): WaitStrategy {
  return Object.freeze({
    name: 'long-poll',
    poll: <T>(plan: PollPlan<T>) => holdMailbox(plan, longPoll),
  });
}

async function holdMailbox<T>(plan: PollPlan<T>, longPoll: LongPoll): Promise<PollOutcome<T>> {
  const { clock, signal } = plan;
  // Rule 3: the same window as the polling loop's, so a fallback ends with it.
  const window = openWaitWindow(plan);
  const { startedAt, deadline, hardStop, elapsed, settle } = window;

  let sinceId = longPoll.sinceId;
  let round = 0;
  let checks = 0;
  let failedChecks = 0;
  let refusals = 0;
  let lastError: Error | undefined;

  const wakeup = new Wakeup(plan.watchPassedOver);
  const outcome = (result: T | undefined, coveredDeadline = false): PollOutcome<T> => {
    wakeup.close();
    return settle(result, { coveredDeadline, checks, failedChecks, refusals, lastError });
  };

  for (;;) {
    if (signal?.aborted) return outcome(undefined);
    const start = clock.now();
    if (start > hardStop) return outcome(undefined);
    const holdEnd = holdEndBefore(plan.cutAt, start, deadline);
    // The hold's look is a list call for pacing from now on (pacer.ts).
    const { lookAt, unlook } = await plan.pacer().holdStarts(signal);
    if (signal?.aborted) return outcome(undefined);
    if (holdEnd < deadline && lookAt >= holdEnd) {
      // The service looks no sooner than the address's floor allows, and
      // it would not look before the cut: a hold now could not be answered,
      // so it would be no check. The cut ends the wait.
      await sleepUntil(clock, hardStop, signal);
      return outcome(undefined);
    }
    const holdMs = Math.max(0, holdEnd - start);
    // A hold that ends before the deadline is not the look at its end.
    const capped = holdMs > MAX_HOLD_MS || holdEnd < deadline;
    // The hold's answer may come up to one request timeout after it ends, but
    // never after the hard stop: a hold that starts late (the last answer came
    // past the deadline, in a quiet period) gets only what is left of it.
    const timeoutMs = Math.min(Math.min(holdMs, MAX_HOLD_MS) + plan.requestTimeout, hardStop - start);
    if (timeoutMs < MIN_REQUEST_MS) {
      // Too little time left for a request: no hold is sent, so none is counted.
      unlook();
      return outcome(undefined);
    }

    let answer: HeldListing;
    try {
      answer = await longPoll.hold(sinceId, Math.min(holdMs, MAX_HOLD_MS), signal, timeoutMs, Math.max(0, lookAt - start));
    } catch (error) {
      // A hold that got no answer (reset, timeout) may have been counted by
      // the service; counting it here too is the safe side (pacer.ts says why).
      if (error instanceof MailroomNetworkError) plan.pacer().note();
      // Refused before any look: the service counted nothing. Any other
      // failure may come after the look, and stays counted.
      if (error instanceof MailroomApiError && error.slug === 'too_many_waits') unlook();
      if (signal?.aborted) return outcome(undefined);
      if (error instanceof MailroomApiError && error.status === 429) {
        refusals++;
        const retryAfterMs = error.retryAfterMs ?? 1000;
        plan.onEvent?.({ type: 'refused', retryAfterMs, startedMs: start - startedAt, elapsedMs: elapsed() });
        const retryAt = clock.now() + retryAfterMs;
        plan.pacer().refusedUntil(retryAt);
        // A Retry-After past the end cannot be honoured in time: end now
        // rather than sleep for nothing (as the polling loop does).
        if (retryAt > (plan.mode === 'quiet' ? hardStop : deadline)) return outcome(undefined);
        plan.onEvent?.({ type: 'sleep', reason: 'retry-after', ms: retryAfterMs, elapsedMs: elapsed() });
        await sleepUntil(clock, retryAt, signal);
        continue;
      }
      if (error instanceof MailroomApiError && ADDRESS_REFUSALS.has(error.slug)) throw error;
      failedChecks++;
      lastError = asError(error);
      plan.onEvent?.({ type: 'check-failed', round, error: lastError, startedMs: start - startedAt, elapsedMs: elapsed() });
      // The polling loop takes over this wait's own window: same deadline,
      // same hard stop, however late the failure came.
      wakeup.close();
      const rest = await pollMailbox(plan, { attempted: true, window });
      return {
        ...rest,
        checks: checks + rest.checks,
        failedChecks: failedChecks + rest.failedChecks,
        refusals: refusals + rest.refusals,
        elapsedMs: elapsed(),
        lastError: rest.lastError ?? lastError,
      };
    }
    const answeredAt = clock.now();
    // The service counted the answer as a list call: the next one keeps its floor from it.
    plan.pacer().note();
    checks++;
    plan.onEvent?.({ type: 'check', round, checks, startedMs: start - startedAt, elapsedMs: elapsed(), listed: answer.messages.length });
    round++;

    let incomplete = false;
    const result = await plan.inspect(answer.messages, { hardStop, incomplete: () => void (incomplete = true) });
    if (result !== undefined) return outcome(result);
    // A hold that ran to the deadline, or one that started at or after it,
    // is the look at the end of the budget. "Ran to the deadline" is read on
    // this clock: the service's timer may end a hold a little early against
    // it (a loaded event loop's cached time), and a quiet period is confirmed
    // only by a look that saw its end.
    const covered = (answer.timedOut && !capped && answeredAt >= deadline) || start >= deadline;
    if (covered) return outcome(undefined, true);
    if (plan.mode === 'until-found' && answeredAt >= deadline) return outcome(undefined);

    if (incomplete) {
      // Listed mail is not done with: a match could not be fetched (a
      // transient failure), or a concurrent wait holds it. The next hold
      // counts from the same place so it lists it again, after the pause
      // the polling loop would take. Should the concurrent wait let go of
      // it (or return it) meanwhile, this listing is looked at again at
      // once instead; once nothing in it is left unfinished, the next hold
      // counts from its newest message.
      const pause = scheduleDelay(round - 1, plan.random);
      const pauseEnd = Math.min(clock.now() + pause, deadline);
      plan.onEvent?.({ type: 'sleep', reason: 'schedule', ms: pause, elapsedMs: elapsed() });
      for (;;) {
        await sleepUntil(clock, pauseEnd, wakeup.signal(signal));
        if (signal?.aborted || !wakeup.take()) break;
        incomplete = false;
        const again = await plan.inspect(answer.messages, { hardStop, incomplete: () => void (incomplete = true) });
        if (again !== undefined) return outcome(again);
        if (!incomplete) {
          sinceId = answer.messages[0]?.id ?? sinceId;
          break;
        }
      }
    } else {
      sinceId = answer.messages[0]?.id ?? sinceId;
    }
  }
}

/**
 * How far before the cut a hold ends, so the service's timeout answer (sent
 * at the end of the hold) arrives before the cut: loopback answers take
 * milliseconds, a loaded machine more.
 */
const CUT_MARGIN_MS = 300;

/**
 * When a hold starting at `start` should end: at the deadline, or shortly
 * before the cut when the cut comes first.
 */
function holdEndBefore(cutAt: number | undefined, start: number, deadline: number): number {
  if (cutAt === undefined || cutAt >= deadline) return deadline;
  return cutAt - Math.min(CUT_MARGIN_MS, Math.max(0, cutAt - start) / 4);
}
