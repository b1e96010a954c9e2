// The SMTP deferral lab as the client returns it (an embedded-server
// extension, docs/CONTRACT.md "SMTP rules"): camel-cased, dates as `Date`,
// durations in ms.
import type { SmtpRuleStage } from '../contract/smtp-lab.js';

export type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind, SmtpRuleStage } from '../contract/smtp-lab.js';
/** One SMTP attempt that named the address as a recipient (shared with the MCP tools, which print the same timeline). */
export type { SmtpAttempt } from '../contract/attempt-reading.js';

/** A rule as the service stored it: every field filled in. */
export type SmtpRule = {
  readonly id: string;
  readonly setAt: Date;
  /** Attempts it still acts on; null: until cleared. */
  readonly remaining: number | null;
} & (
  | { readonly kind: 'greylist'; readonly minDelay: number; readonly resetOnEarlyRetry: boolean }
  | { readonly kind: 'throttle'; readonly limit: number; readonly per: number }
  | {
      readonly kind: 'defer' | 'reject';
      readonly code: number;
      readonly enhanced: string;
      readonly text: string | null;
      readonly stage: SmtpRuleStage;
      readonly times: number;
    }
  | { readonly kind: 'slow'; readonly delayMs: number; readonly stage: SmtpRuleStage; readonly times: number | null }
  | { readonly kind: 'disconnect'; readonly stage: SmtpRuleStage; readonly times: number }
  /** A provider API answers 429 with `Retry-After` (over SMTP: `451 4.7.0`, saying when). */
  | { readonly kind: 'rate_limit'; readonly retryAfter: number; readonly stage: SmtpRuleStage; readonly times: number }
  /** A provider API answers `status` (500, 502, 503, 504; over SMTP: `451 4.3.0`). */
  | { readonly kind: 'unavailable'; readonly status: number; readonly stage: SmtpRuleStage; readonly times: number }
);
