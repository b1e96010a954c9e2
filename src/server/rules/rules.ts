// Per-address SMTP rules as plain records: what a store keeps (JSON-able,
// times in the server clock's ms, no closures and no timers), and their wire
// form. The decisions made from them live beside this file.
import type { SmtpRuleKind, SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { WireSmtpRule } from '../../contract/wire.js';

/** A rule as set: its kind and fields, defaults filled in. */
export type RuleSpec =
  | { readonly kind: 'greylist'; readonly minDelayMs: number; readonly resetOnEarlyRetry: boolean }
  | { readonly kind: 'throttle'; readonly limit: number; readonly perMs: number }
  | {
      readonly kind: 'defer' | 'reject';
      readonly code: number;
      readonly enhancedCode: string;
      readonly text: string | null;
      readonly stage: SmtpRuleStage;
      readonly times: number;
    }
  | { readonly kind: 'slow'; readonly delayMs: number; readonly stage: SmtpRuleStage; readonly times: number | null }
  | { readonly kind: 'disconnect'; readonly stage: SmtpRuleStage; readonly times: number }
  /**
   * The API-first rules. Each keeps the SMTP reply it answers there
   * (contract/smtp-lab.ts API_RULE_SMTP_REPLY), so both stores decide them
   * as they decide a deferral; a provider API call reads `retryAfterMs` or
   * `status` from the decision.
   */
  | {
      readonly kind: 'rate_limit';
      readonly retryAfterMs: number;
      readonly code: number;
      readonly enhancedCode: string;
      readonly stage: SmtpRuleStage;
      readonly times: number;
    }
  | {
      readonly kind: 'unavailable';
      readonly status: number;
      readonly code: number;
      readonly enhancedCode: string;
      readonly stage: SmtpRuleStage;
      readonly times: number;
    };

/** A stored rule: the spec, its id, when it was set, and how many more times it acts (`null`: until cleared). */
export type RuleRecord = RuleSpec & {
  readonly id: string;
  readonly setAt: number;
  remaining: number | null;
};

/** Greylisting's memory of one (client IP, MAIL FROM, RCPT TO) triple. */
export interface TripleRecord {
  /** When the window started: the first attempt, or the latest too-early one when it restarts the clock. */
  firstSeenAt: number;
  /** When a retry after the window was let through; from then on the triple passes. */
  passedAt: number | null;
}

/** Everything the lab keeps for one address: a store holds one of these per address. */
export interface AddressRules {
  /** In the order they were set, which is the order they act in. */
  rules: RuleRecord[];
  /** Greylisting's triples, keyed by `tripleKey`. */
  triples: Record<string, TripleRecord>;
  /** When recipients at this address were accepted at RCPT, oldest first: what throttles count. */
  accepted: number[];
  /** The next rule id's number. */
  nextId: number;
}

export function emptyAddressRules(): AddressRules {
  return { rules: [], triples: {}, accepted: [], nextId: 1 };
}

export function kindOf(rule: RuleSpec): SmtpRuleKind {
  return rule.kind;
}

export function toWireRule(rule: RuleRecord): WireSmtpRule {
  const head = { id: rule.id, set_at: new Date(rule.setAt).toISOString(), remaining: rule.remaining };
  switch (rule.kind) {
    case 'greylist':
      return { ...head, kind: rule.kind, min_delay_ms: rule.minDelayMs, reset_on_early_retry: rule.resetOnEarlyRetry };
    case 'throttle':
      return { ...head, kind: rule.kind, limit: rule.limit, per_ms: rule.perMs };
    case 'defer':
    case 'reject':
      return { ...head, kind: rule.kind, code: rule.code, enhanced_code: rule.enhancedCode, text: rule.text, stage: rule.stage, times: rule.times };
    case 'slow':
      return { ...head, kind: rule.kind, delay_ms: rule.delayMs, stage: rule.stage, times: rule.times };
    case 'disconnect':
      return { ...head, kind: rule.kind, stage: rule.stage, times: rule.times };
    case 'rate_limit':
      return { ...head, kind: rule.kind, retry_after_ms: rule.retryAfterMs, stage: rule.stage, times: rule.times };
    case 'unavailable':
      return { ...head, kind: rule.kind, status: rule.status, stage: rule.stage, times: rule.times };
  }
}
