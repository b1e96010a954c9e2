// The options of `inbox.smtp.greylist()` and its siblings: checked at the
// edge (unknown keys refused, every message naming the key and the value)
// and turned into the wire's rule. Defaults are the server's, filled in
// there and shown in the rule it returns.
import {
  DEFER_CODES,
  REJECT_CODES,
  SMTP_RULE_LIMITS,
  SMTP_RULE_STAGES,
  UNAVAILABLE_STATUSES,
  enhancedFits,
  isReplyText,
  type SmtpRuleStage,
} from '../contract/smtp-lab.js';
import { describeValue, expectedError } from '../contract/validation.js';
import type { WireSmtpRuleInput } from '../contract/wire.js';

export interface GreylistOptions {
  /** How long after its first attempt a (client IP, sender, recipient) triple may retry and pass, in ms. Default 1 s. */
  readonly minDelay?: number | undefined;
  /** A retry inside the window starts it over, as some receivers punish impatience. Default false. */
  readonly resetOnEarlyRetry?: boolean | undefined;
}

export interface ThrottleOptions {
  /** Messages accepted per window; the next one gets `421 4.7.0` and the connection is closed. */
  readonly limit: number;
  /** The sliding window, in ms. Default 60 s. */
  readonly per?: number | undefined;
}

export interface ReplyRuleOptions {
  /** The reply code: 450, 451 (default) or 452 for `defer`; 550 (default) to 554 for `reject`. */
  readonly code?: number | undefined;
  /** Its enhanced status code, of the same class (`4.7.1`, `5.1.1`); by default one that fits the code. */
  readonly enhanced?: string | undefined;
  /** The reply's words (one line of ASCII); the server adds that it is a test rule. */
  readonly text?: string | undefined;
  /** At RCPT TO, or at the end of DATA. `defer`: `rcpt`; `reject`: `data`, so a retry of the refused mail is told by its Message-ID. */
  readonly stage?: SmtpRuleStage | undefined;
  /** How many attempts get the reply. Default 1. */
  readonly times?: number | undefined;
}

export interface SlowOptions {
  /** How long the reply is held, in ms. */
  readonly delayMs: number;
  /** Which reply: at RCPT TO (default) or at the end of DATA. */
  readonly stage?: SmtpRuleStage | undefined;
  /** How many attempts are held; every one until cleared by default. */
  readonly times?: number | undefined;
}

export interface DisconnectOptions {
  /** Where the connection drops without a reply: at RCPT TO (default) or at the end of DATA. */
  readonly stage?: SmtpRuleStage | undefined;
  /** How many attempts. Default 1. */
  readonly times?: number | undefined;
}

export interface RateLimitOptions {
  /** What the answer's `Retry-After` says, in ms (whole seconds on the wire, rounded up). Default 1 s. */
  readonly retryAfter?: number | undefined;
  /** How many calls (or SMTP attempts) are refused. Default 1. */
  readonly times?: number | undefined;
  /** Over SMTP: at RCPT TO (default) or at the end of DATA. A provider API call meets both at once. */
  readonly stage?: SmtpRuleStage | undefined;
}

export interface UnavailableOptions {
  /** The HTTP status a provider API answers: 500, 502, 503 (default) or 504. */
  readonly status?: number | undefined;
  /** How many calls (or SMTP attempts) are refused. Default 1. */
  readonly times?: number | undefined;
  /** Over SMTP: at RCPT TO (default) or at the end of DATA. */
  readonly stage?: SmtpRuleStage | undefined;
}

type Kind = WireSmtpRuleInput['kind'];

/** The method that sets each kind, as messages name it. */
const METHOD: Readonly<Record<Kind, string>> = {
  greylist: 'greylist',
  throttle: 'throttle',
  defer: 'defer',
  reject: 'reject',
  slow: 'slow',
  disconnect: 'disconnect',
  rate_limit: 'rateLimit',
  unavailable: 'unavailable',
};

const KEYS: Readonly<Record<Kind, readonly string[]>> = {
  greylist: ['minDelay', 'resetOnEarlyRetry'],
  throttle: ['limit', 'per'],
  defer: ['code', 'enhanced', 'text', 'stage', 'times'],
  reject: ['code', 'enhanced', 'text', 'stage', 'times'],
  slow: ['delayMs', 'stage', 'times'],
  disconnect: ['stage', 'times'],
  rate_limit: ['retryAfter', 'times', 'stage'],
  unavailable: ['status', 'times', 'stage'],
};

function checkKeys(kind: Kind, options: unknown, required: boolean): Record<string, unknown> {
  if (options === undefined && !required) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`Expected inbox.smtp.${METHOD[kind]}() options to be an object like { ${KEYS[kind][0]}: … }, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!KEYS[kind].includes(key)) throw new TypeError(`Unknown inbox.smtp.${METHOD[kind]}() option \`${key}\`; expected one of ${KEYS[kind].join(', ')}`);
  }
  return options as Record<string, unknown>;
}

function whole(o: Record<string, unknown>, key: string, min: number, max: number, what: string): number | undefined {
  const value = o[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw expectedError(key, `${what} from ${min} to ${max}`, value);
  return value;
}

function needed(kind: Kind, key: string, value: number | undefined, what: string): number {
  if (value === undefined) throw new TypeError(`inbox.smtp.${METHOD[kind]}() needs \`${key}\` (${what})`);
  return value;
}

function stage(o: Record<string, unknown>): SmtpRuleStage | undefined {
  if (o.stage !== undefined && !SMTP_RULE_STAGES.includes(o.stage as SmtpRuleStage)) throw expectedError('stage', '"rcpt" or "data"', o.stage);
  return o.stage as SmtpRuleStage | undefined;
}

const times = (o: Record<string, unknown>) => whole(o, 'times', 1, SMTP_RULE_LIMITS.maxTimes, 'a whole number of attempts');
const ms = (o: Record<string, unknown>, key: string, min: number, max: number) => whole(o, key, min, max, 'a whole number of milliseconds');

/** Drops the keys left undefined, so the wire only carries what was asked for. */
function defined<T extends object>(rule: T): T {
  return Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== undefined)) as T;
}

function replyRule(kind: 'defer' | 'reject', options: unknown): WireSmtpRuleInput {
  const o = checkKeys(kind, options, false);
  const codes = kind === 'defer' ? DEFER_CODES : REJECT_CODES;
  if (o.code !== undefined && !(typeof o.code === 'number' && codes.includes(o.code))) {
    throw expectedError('code', codes.join(', ').replace(/, (\d+)$/, ' or $1'), o.code);
  }
  if (o.enhanced !== undefined && !(typeof o.enhanced === 'string' && enhancedFits(o.code ?? codes[kind === 'defer' ? 1 : 0]!, o.enhanced))) {
    throw expectedError('enhanced', `an enhanced status code of the reply's class, like "${kind === 'defer' ? '4.7.1' : '5.1.1'}"`, o.enhanced);
  }
  if (o.text !== undefined && !isReplyText(o.text)) {
    throw expectedError('text', `one line of printable ASCII, 1 to ${SMTP_RULE_LIMITS.maxTextLength} characters`, o.text);
  }
  return defined({
    kind,
    code: o.code,
    enhanced_code: o.enhanced,
    text: o.text,
    stage: stage(o),
    times: times(o),
  });
}

export const ruleFromOptions = {
  greylist(options: GreylistOptions | undefined): WireSmtpRuleInput {
    const o = checkKeys('greylist', options, false);
    if (o.resetOnEarlyRetry !== undefined && typeof o.resetOnEarlyRetry !== 'boolean')
      throw expectedError('resetOnEarlyRetry', 'a boolean', o.resetOnEarlyRetry);
    return defined({
      kind: 'greylist' as const,
      min_delay_ms: ms(o, 'minDelay', 0, SMTP_RULE_LIMITS.maxWindowMs),
      reset_on_early_retry: o.resetOnEarlyRetry,
    });
  },
  throttle(options: ThrottleOptions): WireSmtpRuleInput {
    const o = checkKeys('throttle', options, true);
    const limit = needed('throttle', 'limit', whole(o, 'limit', 0, SMTP_RULE_LIMITS.maxLimit, 'a whole number of messages'), 'messages per window');
    return defined({ kind: 'throttle' as const, limit, per_ms: ms(o, 'per', 1, SMTP_RULE_LIMITS.maxWindowMs) });
  },
  defer: (options: ReplyRuleOptions | undefined) => replyRule('defer', options),
  reject: (options: ReplyRuleOptions | undefined) => replyRule('reject', options),
  slow(options: SlowOptions): WireSmtpRuleInput {
    const o = checkKeys('slow', options, true);
    const delayMs = needed('slow', 'delayMs', ms(o, 'delayMs', 0, SMTP_RULE_LIMITS.maxDelayMs), 'how long the reply is held, in ms');
    return defined({ kind: 'slow' as const, delay_ms: delayMs, stage: stage(o), times: times(o) });
  },
  disconnect(options: DisconnectOptions | undefined): WireSmtpRuleInput {
    const o = checkKeys('disconnect', options, false);
    return defined({ kind: 'disconnect' as const, stage: stage(o), times: times(o) });
  },
  rateLimit(options: RateLimitOptions | undefined): WireSmtpRuleInput {
    const o = checkKeys('rate_limit', options, false);
    return defined({ kind: 'rate_limit' as const, retry_after_ms: ms(o, 'retryAfter', 0, SMTP_RULE_LIMITS.maxWindowMs), stage: stage(o), times: times(o) });
  },
  unavailable(options: UnavailableOptions | undefined): WireSmtpRuleInput {
    const o = checkKeys('unavailable', options, false);
    if (o.status !== undefined && !(typeof o.status === 'number' && UNAVAILABLE_STATUSES.includes(o.status))) {
      throw expectedError('status', UNAVAILABLE_STATUSES.join(', ').replace(/, (\d+)$/, ' or $1'), o.status);
    }
    return defined({ kind: 'unavailable' as const, status: o.status, stage: stage(o), times: times(o) });
  },
};
