// The SMTP deferral lab (docs/CONTRACT.md, "SMTP rules"): what both halves
// must agree on about rules and the attempt log - the kinds, the stages a
// rule can act at, the codes each kind may answer with, and the bounds of
// every number. Each half checks its own input against these and names its
// own keys (the client `minDelay`, the wire `min_delay_ms`); only the server
// fills in defaults, which are here so that every door that takes a rule
// (the server's parser, the MCP tools' descriptions) names the same ones.

export type SmtpRuleKind = 'greylist' | 'throttle' | 'defer' | 'reject' | 'slow' | 'disconnect' | 'rate_limit' | 'unavailable';
export const SMTP_RULE_KINDS: readonly SmtpRuleKind[] = Object.freeze([
  'greylist',
  'throttle',
  'defer',
  'reject',
  'slow',
  'disconnect',
  'rate_limit',
  'unavailable',
]);

/** Where a per-address rule can act: only from RCPT TO on does the server know the address. */
export type SmtpRuleStage = 'rcpt' | 'data';
export const SMTP_RULE_STAGES: readonly SmtpRuleStage[] = Object.freeze(['rcpt', 'data']);

/** `api`: a provider API's send call (docs/providers.md), one attempt per recipient of the call. */
export type SmtpAttemptStage = 'connect' | 'mail' | 'rcpt' | 'data' | 'api';
export const SMTP_ATTEMPT_STAGES: readonly SmtpAttemptStage[] = Object.freeze(['connect', 'mail', 'rcpt', 'data', 'api']);
export type SmtpAttemptOutcome = 'accepted' | 'deferred' | 'rejected' | 'dropped';
export const SMTP_ATTEMPT_OUTCOMES: readonly SmtpAttemptOutcome[] = Object.freeze(['accepted', 'deferred', 'rejected', 'dropped']);

export const DEFER_CODES: readonly number[] = Object.freeze([450, 451, 452]);
export const REJECT_CODES: readonly number[] = Object.freeze([550, 551, 552, 553, 554]);

/** The defaults of every rule, as the server fills them in (server/rules/rule-input.ts). */
export const RULE_DEFAULTS = Object.freeze({
  greylist: Object.freeze({ minDelayMs: 1_000, resetOnEarlyRetry: false }),
  throttle: Object.freeze({ perMs: 60_000 }),
  defer: Object.freeze({ code: 451, stage: 'rcpt', times: 1 }),
  // At DATA, so the lab has seen the mail's Message-ID and can tell a retry of the refused mail from a new one.
  reject: Object.freeze({ code: 550, stage: 'data', times: 1 }),
  slow: Object.freeze({ stage: 'rcpt', times: null }),
  disconnect: Object.freeze({ stage: 'rcpt', times: 1 }),
  // The two a provider API says most often when things go wrong; over SMTP they are deferrals.
  rate_limit: Object.freeze({ retryAfterMs: 1_000, stage: 'rcpt', times: 1 }),
  unavailable: Object.freeze({ status: 503, stage: 'rcpt', times: 1 }),
});

/** The HTTP statuses an `unavailable` rule may answer a provider API call with. */
export const UNAVAILABLE_STATUSES: readonly number[] = Object.freeze([500, 502, 503, 504]);

/**
 * What the two API-first rules answer over SMTP: both are deferrals, a
 * rate limit saying when to come back (`4.7.0`, as rate limiting does), an
 * outage that the service is down (`4.3.0`).
 */
export const API_RULE_SMTP_REPLY = Object.freeze({
  rate_limit: Object.freeze({ code: 451, enhancedCode: '4.7.0' }),
  unavailable: Object.freeze({ code: 451, enhancedCode: '4.3.0' }),
});

/** The enhanced code a defer or reject answers with when none is given, by reply code. */
export const DEFAULT_ENHANCED: Readonly<Record<number, string>> = Object.freeze({
  450: '4.2.0', // mailbox unavailable
  451: '4.3.0', // local error in processing
  452: '4.2.2', // mailbox full
  550: '5.1.1', // no such mailbox
  551: '5.1.6', // mailbox moved
  552: '5.2.2', // mailbox full, for good
  553: '5.1.3', // bad address syntax
  554: '5.7.1', // refused by policy
});

/** The bounds of a rule's numbers (inclusive). Durations are milliseconds. */
export const SMTP_RULE_LIMITS = Object.freeze({
  /** Greylisting's window and a throttle's: up to a day. */
  maxWindowMs: 24 * 60 * 60 * 1000,
  /** A slow reply: up to ten minutes, longer than any client waits. */
  maxDelayMs: 10 * 60 * 1000,
  maxTimes: 10_000,
  maxLimit: 100_000,
  /** A reply text: printable ASCII, one line. */
  maxTextLength: 200,
  /** Rules one address may hold at once. */
  maxRulesPerAddress: 32,
});

/** An enhanced status code (RFC 3463) `class.subject.detail`, e.g. `4.7.1`. */
export const ENHANCED_CODE = /^[245]\.\d{1,3}\.\d{1,3}$/;

/** True when `enhanced` is well-formed and of the same class as `code` (4.x.x for 4xx). */
export function enhancedFits(code: number, enhanced: string): boolean {
  return ENHANCED_CODE.test(enhanced) && enhanced[0] === String(code)[0];
}

/** One line of printable ASCII, as an SMTP reply's text must be. */
export function isReplyText(text: unknown): text is string {
  return typeof text === 'string' && text.length > 0 && text.length <= SMTP_RULE_LIMITS.maxTextLength && /^[\x20-\x7e]+$/.test(text);
}
