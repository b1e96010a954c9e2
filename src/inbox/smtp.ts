// `inbox.smtp`: the SMTP deferral lab for one inbox's address - set rules
// that make the mail server greylist, throttle, defer, reject, slow down or
// drop the app's mail to this address only, and read back every attempt the
// app made. The rules and the log belong to the mailbox: the test fixtures
// delete them with it after the test.
import type { MailBackend } from '../backends/backend.js';
import type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
import { assertMs } from '../contract/validation.js';
import type { WireSmtpRuleInput } from '../contract/wire.js';
import type { Clock } from '../wait/clock.js';
import { callWithRetry } from '../wait/retry.js';
import {
  ruleFromOptions,
  type DisconnectOptions,
  type GreylistOptions,
  type RateLimitOptions,
  type ReplyRuleOptions,
  type UnavailableOptions,
  type SlowOptions,
  type ThrottleOptions,
} from './smtp-rule-options.js';

/** A call's budget, retries included. */
const CALL_BUDGET_MS = 10_000;
/** How often `watch` reads the log: well inside the message budget (10 calls a second per address). */
export const WATCH_INTERVAL_MS = 250;

export interface WatchOptions {
  /** How long to keep reading the log, in ms. */
  readonly within: number;
  readonly signal?: AbortSignal | undefined;
}

export interface WatchOutcome<T> {
  /** The log as last read, oldest first. */
  readonly attempts: readonly SmtpAttempt[];
  /** What `settle` decided, or undefined when `within` ended (or the watch was cut) first. */
  readonly settled: T | undefined;
  /** How long the watch ran, in ms. */
  readonly elapsedMs: number;
  /** True when a signal (the test's own deadline) ended it before `within`. */
  readonly cutShort: boolean;
}

/** The SMTP deferral lab, for one address (`inbox.smtp`). */
export interface InboxSmtp {
  /**
   * Greylists the address: the first attempt of each (client IP, MAIL FROM,
   * RCPT TO) triple gets `451 4.7.1` at RCPT; a retry after `minDelay` passes.
   */
  greylist(options?: GreylistOptions): Promise<SmtpRule>;
  /** Past `limit` messages in any `per` ms, RCPT gets `421 4.7.0` and the connection is closed. */
  throttle(options: ThrottleOptions): Promise<SmtpRule>;
  /** The next `times` attempts get a temporary refusal (450/451/452). */
  defer(options?: ReplyRuleOptions): Promise<SmtpRule>;
  /** The next `times` attempts get a permanent refusal (550..554). */
  reject(options?: ReplyRuleOptions): Promise<SmtpRule>;
  /** Holds the reply at a stage for `delayMs` (silent throttling). */
  slow(options: SlowOptions): Promise<SmtpRule>;
  /** The next `times` attempts lose the connection without a reply. */
  disconnect(options?: DisconnectOptions): Promise<SmtpRule>;
  /**
   * The next `times` provider API calls get the provider's 429 with
   * `Retry-After` (SES `TooManyRequestsException`, Resend
   * `rate_limit_exceeded`, ...); over SMTP, `451 4.7.0` saying when.
   */
  rateLimit(options?: RateLimitOptions): Promise<SmtpRule>;
  /** The next `times` provider API calls get a 500/502/503/504 in the provider's shape; over SMTP, `451 4.3.0`. */
  unavailable(options?: UnavailableOptions): Promise<SmtpRule>;
  /** Clears every rule of the address and what they remembered; returns how many there were. The log stays. */
  clear(): Promise<number>;
  /** The address's rules, in the order they act. */
  rules(): Promise<SmtpRule[]>;
  /** Every SMTP attempt that named the address as a recipient, oldest first. */
  attempts(): Promise<SmtpAttempt[]>;
  /**
   * Reads the log every 250 ms until `settle(attempts)` returns something
   * other than undefined, or `within` ms have passed (then it is read one
   * last time). The matchers are built on it.
   */
  watch<T>(settle: (attempts: readonly SmtpAttempt[]) => T | undefined, options: WatchOptions): Promise<WatchOutcome<T>>;
  /** True once a rule was set or the log read through this inbox: the test fixtures then attach the timeline. */
  readonly used: boolean;
}

export interface InboxSmtpContext {
  readonly address: string;
  readonly client: MailBackend;
  readonly clock: Clock;
  readonly requestTimeout: number;
  /** The caller's signal combined with the inbox's own cut-off (the test's deadline). */
  readonly stopFor: (signal: AbortSignal | undefined) => AbortSignal | undefined;
}

export function createInboxSmtp(context: InboxSmtpContext): InboxSmtp {
  const { address, client, clock, requestTimeout } = context;
  let used = false;
  const retried = <T>(call: (timeout: number) => Promise<T>, signal?: AbortSignal, budgetMs = CALL_BUDGET_MS): Promise<T> =>
    callWithRetry(call, { clock, hardStop: clock.now() + budgetMs, requestTimeout, signal });
  const add = async (rule: WireSmtpRuleInput): Promise<SmtpRule> => {
    used = true;
    return (await retried((timeout) => client.addSmtpRule(address, rule, { timeout }))).rule;
  };
  const read = (signal?: AbortSignal, budgetMs?: number): Promise<SmtpAttempt[]> => {
    used = true;
    return retried((timeout) => client.smtpAttempts(address, { timeout, signal }), signal, budgetMs);
  };

  return Object.freeze({
    greylist: async (options?: GreylistOptions) => add(ruleFromOptions.greylist(options)),
    throttle: async (options: ThrottleOptions) => add(ruleFromOptions.throttle(options)),
    defer: async (options?: ReplyRuleOptions) => add(ruleFromOptions.defer(options)),
    reject: async (options?: ReplyRuleOptions) => add(ruleFromOptions.reject(options)),
    slow: async (options: SlowOptions) => add(ruleFromOptions.slow(options)),
    disconnect: async (options?: DisconnectOptions) => add(ruleFromOptions.disconnect(options)),
    rateLimit: async (options?: RateLimitOptions) => add(ruleFromOptions.rateLimit(options)),
    unavailable: async (options?: UnavailableOptions) => add(ruleFromOptions.unavailable(options)),
    clear: () => retried((timeout) => client.clearSmtpRules(address, { timeout })),
    rules: () => retried((timeout) => client.smtpRules(address, { timeout })),
    attempts: () => read(),
    async watch<T>(settle: (attempts: readonly SmtpAttempt[]) => T | undefined, options: WatchOptions): Promise<WatchOutcome<T>> {
      assertMs('within', options.within);
      const signal = context.stopFor(options.signal);
      const startedAt = clock.now();
      const endsAt = startedAt + options.within;
      for (;;) {
        // Each read may take the rest of the window, and one request timeout past it.
        const attempts = await read(signal, Math.max(requestTimeout, endsAt - clock.now() + requestTimeout));
        const settled = settle(attempts);
        const elapsedMs = clock.now() - startedAt;
        if (settled !== undefined) return { attempts, settled, elapsedMs, cutShort: false };
        if (signal?.aborted) return { attempts, settled: undefined, elapsedMs, cutShort: true };
        const left = endsAt - clock.now();
        if (left <= 0) return { attempts, settled: undefined, elapsedMs, cutShort: false };
        await clock.sleep(Math.min(WATCH_INTERVAL_MS, left), signal);
      }
    },
    get used() {
      return used;
    },
  });
}
