// The seam between a wait and how it looks at the mailbox. A `WaitStrategy`
// takes a `PollPlan` and returns a `PollOutcome`; the polling loop
// (polling-strategy.ts) and the long-poll (long-poll-strategy.ts) are the two
// strategies, and the inbox above them decides what counts as found. So the
// deadline, the watermark walk, the filters, exactly-once and the failure
// text are the same whichever strategy runs.
import type { MailSummary } from '../client/messages.js';
import type { Clock, RandomSource } from './clock.js';
import type { ListPacer } from './pacer.js';

export type PollMode =
  /** Stop as soon as `inspect` returns something; the deadline is failure. */
  | 'until-found'
  /** Keep looking until the deadline; the deadline (with a check at it) is success. */
  | 'quiet';

export type PollEvent =
  | { readonly type: 'check'; readonly round: number; readonly checks: number; readonly startedMs: number; readonly elapsedMs: number; readonly listed: number }
  | { readonly type: 'refused'; readonly retryAfterMs: number; readonly startedMs: number; readonly elapsedMs: number }
  | { readonly type: 'check-failed'; readonly round: number; readonly error: Error; readonly startedMs: number; readonly elapsedMs: number }
  | { readonly type: 'sleep'; readonly reason: 'schedule' | 'retry-after' | 'closing-check'; readonly ms: number; readonly elapsedMs: number };

export interface PollPlan<T> {
  readonly mode: PollMode;
  readonly budgetMs: number;
  readonly clock: Clock;
  readonly random: RandomSource;
  readonly requestTimeout: number;
  readonly signal: AbortSignal | undefined;
  /**
   * When `signal` is due to fire (on `clock`), if that is known: a test's own
   * deadline. A long-poll hold ends a little before it, so the service's
   * answer, a check, arrives before the wait is cut.
   */
  readonly cutAt?: number | undefined;
  /** The pacer of this address (rule 4 of docs/CONTRACT.md); looked up per call, never cached. */
  readonly pacer: () => ListPacer;
  /** One list call, newest first. Throws the client's typed errors. */
  readonly list: (timeoutMs: number, signal: AbortSignal | undefined) => Promise<readonly MailSummary[]>;
  /**
   * Looks at one answered listing. Returning a value ends the wait with it.
   * `hardStop` is the moment by which any request it makes must be done;
   * `incomplete()` says listed mail could not be handled yet (a fetch
   * failed transiently, or a concurrent wait holds it), so the next check
   * must list it again.
   */
  readonly inspect: (messages: readonly MailSummary[], context: InspectContext) => Promise<T | undefined>;
  /**
   * Subscribes `wake` to news that mail an earlier `inspect` passed over may
   * be taken now (a concurrent wait let go of it, or returned it): the
   * strategy then hands its last listing to `inspect` again at once, with no
   * request. Returns the unsubscribe function.
   */
  readonly watchPassedOver?: ((wake: () => void) => () => void) | undefined;
  readonly onEvent?: ((event: PollEvent) => void) | undefined;
}

export interface InspectContext {
  readonly hardStop: number;
  readonly incomplete: () => void;
}

export interface PollOutcome<T> {
  /** What `inspect` returned, or undefined when the deadline came first. */
  readonly result: T | undefined;
  /** Quiet mode: true when a check that started at or after the deadline was answered. */
  readonly coveredDeadline: boolean;
  readonly checks: number;
  readonly failedChecks: number;
  readonly refusals: number;
  readonly elapsedMs: number;
  readonly lastError: Error | undefined;
  readonly cutShort: boolean;
  readonly cutShortReason: string | undefined;
}

export interface WaitStrategy {
  readonly name: string;
  poll<T>(plan: PollPlan<T>): Promise<PollOutcome<T>>;
}

/** What a strategy counted while it waited. */
export type WaitTally = Pick<PollOutcome<unknown>, 'coveredDeadline' | 'checks' | 'failedChecks' | 'refusals' | 'lastError'>;
