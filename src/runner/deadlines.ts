// A test's own deadlines, as the runner keeps them: a wait gives up shortly
// before the runner would fail the test with its generic timeout, so it
// fails with its own message (address, filter, what was seen), and the
// teardown's delete gives up in time for its note to be written.
import { formatDuration } from '../contract/format.js';
import type { WaitCut } from '../inbox/inbox-options.js';

/** What a runner tells about its test's own timeout, for `timeLeft`. */
export interface TestTimeoutState {
  /** The test's timeout in ms; undefined, 0 or Infinity means none. */
  readonly timeoutMs: number | undefined;
  /** When the runner's timeout clock started (the same scale as `now`). */
  readonly startedAt: number;
  readonly now: number;
  /**
   * True once the test body has ended: afterEach hooks and fixture teardown
   * run on budgets of their own, so the test's timeout no longer cuts a wait.
   */
  readonly bodyFinished: boolean;
}

/**
 * Milliseconds left before the runner fails the test with its own timeout,
 * or undefined when nothing the wait does can run into it. Both adapters'
 * `TestRunnerBridge.timeLeft` are this, fed from their runner's test info.
 */
export function timeLeft({ timeoutMs, startedAt, now, bodyFinished }: TestTimeoutState): number | undefined {
  if (bodyFinished) return undefined;
  if (timeoutMs === undefined || !(timeoutMs > 0) || !Number.isFinite(timeoutMs)) return undefined;
  return timeoutMs - (now - startedAt);
}

/**
 * The teardown's delete gives up after this many request timeouts, and
 * never after `TEARDOWN_BUDGET_MS`, nor after the time the runner still
 * allows teardown: a note that the mailbox could not be deleted beats a
 * passing test turned into a teardown timeout.
 */
const TEARDOWN_REQUESTS = 2;
const TEARDOWN_BUDGET_MS = 10_000;

/** How long the teardown's delete may take, given what the runner still allows (`teardownTimeLeft`). */
export function teardownBudget(requestTimeout: number, teardownLeft: number | undefined): number {
  const budget = Math.min(TEARDOWN_BUDGET_MS, TEARDOWN_REQUESTS * requestTimeout);
  if (teardownLeft === undefined || !Number.isFinite(teardownLeft)) return budget;
  return Math.max(0, Math.min(budget, teardownLeft - deadlineMargin(teardownLeft)));
}

/**
 * How long before the runner's deadline a wait gives up, so it fails with
 * its own message (address, filter, what was seen) and the report still
 * has time to be written, instead of dying of the generic test timeout.
 */
function deadlineMargin(timeLeftMs: number): number {
  return Math.min(1_000, Math.max(100, timeLeftMs / 10));
}

/** A signal that fires shortly before the test's own deadline, and when; undefined when it has none. */
export function deadlineCut(left: number | undefined): WaitCut | undefined {
  if (left === undefined || !Number.isFinite(left)) return undefined;
  const firesInMs = Math.max(0, left - deadlineMargin(left));
  const controller = new AbortController();
  const reason = new Error(`the test's own timeout was ${formatDuration(left)} away`);
  setTimeout(() => controller.abort(reason), firesInMs).unref();
  return { signal: controller.signal, firesInMs, spareMs: left - firesInMs };
}
