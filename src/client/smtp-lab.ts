// The SMTP deferral lab as the client returns it (an embedded-server
// extension, docs/CONTRACT.md "SMTP rules"): camel-cased, dates as `Date`,
// durations in ms.
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind, SmtpRuleStage } from '../contract/smtp-lab.js';

export type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind, SmtpRuleStage } from '../contract/smtp-lab.js';

/** One SMTP attempt that named the address as a recipient. */
export interface SmtpAttempt {
  /** When the server decided the reply (its clock, ms precision). */
  readonly at: Date;
  /**
   * When the sender began this transaction: its connection opened, or its
   * MAIL FROM on a connection it had used before. A retry begins after the
   * reply it answers. Null when the service does not say.
   */
  readonly beganAt: Date | null;
  readonly clientIp: string;
  /** MAIL FROM, `''` for the null sender. */
  readonly from: string;
  readonly to: string;
  readonly stage: SmtpAttemptStage;
  /** The reply code; null when the connection dropped without one. */
  readonly code: number | null;
  readonly enhancedCode: string | null;
  readonly text: string;
  readonly outcome: SmtpAttemptOutcome;
  /** The test rule that decided the reply, or null for the server's own. */
  readonly rule: SmtpRuleKind | null;
  /** The mail's Message-ID header, once its DATA was received (null for a refusal at RCPT). */
  readonly messageId: string | null;
  /** The mail's Subject, likewise. */
  readonly subject: string | null;
  /** The stored message's id (a `MailSummary` id), for an accepted attempt. */
  readonly storedId: string | null;
}

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
);
