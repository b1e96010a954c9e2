// The polling loop: the contract's reference loop (docs/CONTRACT.md, "The
// client's nine rules"; "rule N" below refers to those), as a `WaitStrategy`.
//
// It knows about time and refusals, not about what a wait looks for: each
// answered check hands the listing to `plan.inspect`, which says whether the
// wait is over. Unit tests drive it with a fake clock and a scripted list
// call, integration tests with the real server.
import { MailroomApiError, asError, isTransient } from '../client/errors.js';
import type { MailSummary } from '../client/messages.js';
import { sleepUntil } from './clock.js';
import { TOO_LATE } from './pacer.js';
import { scheduleDelay } from './schedule.js';
import { Wakeup } from './wakeup.js';
import type { PollOutcome, PollPlan, WaitStrategy } from './strategy.js';
import { LIST_FLOOR_MS, openWaitWindow, type WaitWindow } from './window.js';

/** A request with less time than this left is not worth starting. */
export const MIN_REQUEST_MS = 20;

type Answer =
  | { readonly kind: 'expired' }
  | { readonly kind: 'listed'; readonly messages: readonly MailSummary[] }
  | { readonly kind: 'refused'; readonly retryAfterMs: number }
  | { readonly kind: 'failed'; readonly error: Error };

export const pollingStrategy: WaitStrategy = Object.freeze({
  name: 'polling',
  poll: pollMailbox,
});

export interface PollState {
  /**
   * An earlier strategy of this wait already made a request (the long-poll
   * that failed), so the polling loop owes the wait no first look of its own.
   */
  readonly attempted?: boolean | undefined;
  /**
   * The window of the wait this loop takes over (the long-poll's, when it
   * failed): the loop ends with it, never later, however late it starts.
   */
  readonly window?: WaitWindow | undefined;
}

export async function pollMailbox<T>(plan: PollPlan<T>, state: PollState = {}): Promise<PollOutcome<T>> {
  const { clock, signal } = plan;
  const { startedAt, deadline, hardStop, grace, elapsed, settle } = state.window ?? openWaitWindow(plan);

  let round = 0; // schedule index: checks answered or failed; a 429 is not a round (rule 5)
  let checks = 0;
  let failedChecks = 0;
  let refusals = 0;
  let lastError: Error | undefined;
  let coveredDeadline = false;
  // Rule 2: the first check is due at once; only after it does the loop
  // sleep. The pacer may still hold it until the address's floor (rule 4)
  // has passed - after the watermark read, say - since asking sooner would
  // only earn a 429 that costs the same second.
  let nextAt = clock.now();
  // A zero budget still looks once: "is it there right now?" So does a wait
  // taken over at or past its deadline, while its grace lasts.
  let closing = plan.budgetMs <= 0 || nextAt >= deadline;

  const wakeup = new Wakeup(plan.watchPassedOver);
  const outcome = (result: T | undefined): PollOutcome<T> => {
    wakeup.close();
    return settle(result, { coveredDeadline, checks, failedChecks, refusals, lastError });
  };
  /** The last answered listing, looked at again when passed-over mail is let go of. */
  let lastListing: readonly MailSummary[] | undefined;

  for (;;) {
    await sleepUntil(clock, nextAt, wakeup.signal(signal));
    if (signal?.aborted) return outcome(undefined);
    if (wakeup.take() && lastListing !== undefined && clock.now() < hardStop) {
      // Mail the last look passed over (a concurrent wait held it) may be
      // free now: look at that listing again at once, then sleep on.
      const result = await plan.inspect(lastListing, { hardStop, incomplete: () => {} });
      if (result !== undefined) return outcome(result);
      continue;
    }
    // Rule 3, at the top of every round: past the deadline only the one
    // closing check may still run.
    if (clock.now() >= deadline && !closing) return outcome(undefined);

    // A wait looks at least once. When the floor (rule 4) holds its first
    // check past a short budget's deadline - a wait right after the
    // watermark read - that check still goes out, at the floor: at most one
    // list interval late, with the grace for it and its fetch from there.
    // Later checks never start after the deadline but for the closing one.
    const firstLook = plan.mode === 'until-found' && !state.attempted && checks + failedChecks === 0;
    let stop = hardStop;
    let startedMs = Number.NaN;
    const answer = await plan.pacer().run(
      async (): Promise<Answer> => {
        const start = clock.now();
        startedMs = start - startedAt;
        if (firstLook) stop = Math.max(hardStop, start + grace);
        // A slow fetch in `inspect` may have used up the grace already.
        const timeout = Math.min(plan.requestTimeout, stop - start);
        if (timeout < MIN_REQUEST_MS) return { kind: 'expired' };
        try {
          const messages = await plan.list(timeout, signal);
          return { kind: 'listed', messages };
        } catch (error) {
          if (signal?.aborted) return { kind: 'failed', error: asError(signal.reason) };
          if (error instanceof MailroomApiError && error.status === 429) {
            return { kind: 'refused', retryAfterMs: error.retryAfterMs ?? 1000 };
          }
          // Rule 6: a slug that means stop ends the wait at once.
          if (!isTransient(error)) throw error;
          return { kind: 'failed', error: asError(error) };
        }
      },
      // Pacing (rule 4) may hold a check back; one that could only start
      // after the deadline (after the grace, for the quiet period's closing
      // check; after one list interval, for a wait's first look) is not
      // made at all.
      { notAfter: plan.mode === 'quiet' ? hardStop - 1 : firstLook ? deadline + LIST_FLOOR_MS : deadline, signal },
    );
    if (signal?.aborted) return outcome(undefined);
    if (answer === TOO_LATE || answer.kind === 'expired') return outcome(undefined);

    const checkStartedAt = startedAt + startedMs;
    if (answer.kind === 'listed') {
      checks++;
      lastListing = answer.messages;
      plan.onEvent?.({ type: 'check', round, checks, startedMs, elapsedMs: elapsed(), listed: answer.messages.length });
      // Every check lists the whole mailbox again, so nothing is needed to
      // see an unfinished match a second time.
      const result = await plan.inspect(answer.messages, { hardStop: stop, incomplete: () => {} });
      if (result !== undefined) return outcome(result);
      if (checkStartedAt >= deadline) {
        coveredDeadline = true;
        return outcome(undefined);
      }
      nextAt = clock.now() + scheduleDelay(round, plan.random);
      round++;
    } else if (answer.kind === 'refused') {
      // Rule 5: sleep exactly what Retry-After says, and do not count the
      // round: a loop that counted refusals would spend its whole budget
      // collecting them without ever reading the mailbox.
      refusals++;
      plan.onEvent?.({ type: 'refused', retryAfterMs: answer.retryAfterMs, startedMs, elapsedMs: elapsed() });
      nextAt = clock.now() + answer.retryAfterMs;
      // Every list call on this address, not only this loop's, waits it out.
      plan.pacer().refusedUntil(nextAt);
      if (nextAt > deadline && plan.mode === 'until-found') return outcome(undefined);
    } else {
      // 5xx, a reset, a timeout: transient, and the deadline still governs.
      failedChecks++;
      lastError = answer.error;
      plan.onEvent?.({ type: 'check-failed', round, error: answer.error, startedMs, elapsedMs: elapsed() });
      nextAt = clock.now() + scheduleDelay(round, plan.random);
      round++;
    }

    if (closing && plan.mode === 'until-found') return outcome(undefined);
    let reason: 'schedule' | 'retry-after' | 'closing-check' = answer.kind === 'refused' ? 'retry-after' : 'schedule';
    // A quiet period's regular check in its last second would only push the
    // closing check past the end (the floor); the closing check replaces it.
    const closingFrom = plan.mode === 'quiet' ? deadline - LIST_FLOOR_MS : deadline;
    if (nextAt >= closingFrom && answer.kind !== 'refused') {
      // The next scheduled check falls after the deadline. Instead, make one
      // closing check at the deadline itself: mail that arrives in the last
      // stretch of the budget is still found, and a quiet period is only
      // quiet if it was looked at when it ended.
      nextAt = deadline;
      reason = 'closing-check';
    }
    if (nextAt >= deadline) closing = true;
    if (nextAt > hardStop) return outcome(undefined);
    plan.onEvent?.({ type: 'sleep', reason, ms: Math.max(0, nextAt - clock.now()), elapsedMs: elapsed() });
  }
}
