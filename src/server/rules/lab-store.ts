// The lab's boundary: what the SMTP intake and the lab's HTTP calls ask of
// wherever the deferral lab keeps its state (each address's rules, what they
// remember - greylisted triples, the throttle's window - and the attempt
// log). Two real implementations: the memory one (memory-lab.ts, the
// default, one process) and the Redis one (redis/redis-lab.ts, beside
// the Redis mail store, shared by every server on that Redis).
//
// As with the MailStore, answers are `Awaitable`: the memory lab answers
// synchronously, so with it the intake decides and replies in the same tick
// as before the boundary; the Redis lab answers with promises. A lab that
// cannot reach its backing service throws the `503 unavailable` refusal
// (store/store-unavailable.ts): the HTTP calls answer it as it is, and the
// intake answers `451 4.3.0`.
//
// The SMTP path asks two questions per stage. `step` is the first, and the
// only one an address without rules ever costs: undefined when no recipient
// has rules, else the hold of their `slow` rules (spent as it is asked) and,
// when there is no hold, the decision as well (one round trip). After a
// hold, `decide` is asked.
//
// A lab kept beside the mail store (Redis) also offers the end of DATA in
// one round trip (`deliveryBeside`): the look-up for rules, the delivery and
// the log of its accepted attempts in one go, for mail to addresses without
// rules; the intake takes the two questions' way only for mail to an address
// with rules.
import type { SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import type { Awaitable } from '../base/awaitable.js';
import type { StoredMessage } from '../base/stored-message.js';
import type { MailStore } from '../store/mail-store.js';
import type { LoggedAttempt } from './attempt-log.js';
import type { RuleDecision } from './rule-book.js';
import type { RuleRecord, RuleSpec } from './rules.js';

/** Who is sending: the client's IP and MAIL FROM (`''` for the null sender). */
export interface LabSender {
  readonly clientIp: string;
  readonly from: string;
}

/** The first answer of a stage for recipients of which at least one has rules. */
export interface RuleStep {
  /** How long to hold the reply (the longest `slow` rule acting here, already spent); 0 for none. */
  readonly holdMs: number;
  /** The recipient whose `slow` rule holds the reply (the first with one; else the first with rules), for the log's text. */
  readonly heldFor: string;
  /** With no hold, what to answer (undefined: no rule has anything to say). With a hold, ask `decide` once it is over. */
  readonly decision: RuleDecision | undefined;
}

/** An address's rules after one was added. */
export interface AddedRule {
  readonly rule: RuleRecord;
  /** All of the address's rules, in the order they act. */
  readonly rules: readonly RuleRecord[];
}

/** A stored copy as its accepted attempt names it. */
export interface DeliveredCopy {
  readonly id: string;
  readonly mailbox: string;
}

/** The end of DATA in one round trip, from a lab kept beside the mail store (`LabStore.deliveryBeside`). */
export interface LabDelivery {
  /**
   * Unless one of `mailboxes` has rules: stores the mail as the store's
   * `deliver` does and, with it, logs `accepted(copies)` (one attempt per
   * copy, in the copies' order; it is called again with the stored copies,
   * and must answer the same for them), so that `record` need not log those
   * attempts again (the copies are handed to it beside them). Undefined when
   * one of them has rules (or the attempts cannot be logged this way):
   * nothing is stored or logged, and the intake asks `step` as at any stage.
   */
  deliverUnlessRuled(
    mailboxes: readonly string[],
    raw: Buffer,
    envelopeFrom: string,
    accepted: (copies: readonly DeliveredCopy[]) => readonly SmtpAttempt[],
  ): Promise<readonly StoredMessage[] | undefined>;
}

export interface LabStore {
  /** `memory`, or where the shared lab lives (the Redis URL without its password). */
  readonly description: string;

  /**
   * The first question at `stage` for `recipients` (mailbox keys, in RCPT
   * order; one at RCPT): undefined when none of them has rules.
   */
  step(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): Awaitable<RuleStep | undefined>;
  /**
   * What to answer after a hold: the first recipient (in order) whose rules
   * have something to say decides. At RCPT, a recipient let through counts
   * toward its throttles.
   */
  decide(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): Awaitable<RuleDecision | undefined>;

  /** Adds a rule after the address's others; throws TooManyRulesError (rule-book.ts) past the most one address may hold. */
  addRule(address: string, spec: RuleSpec): Awaitable<AddedRule>;
  /** The address's rules in the order they act, used-up ones included (remaining 0). */
  rules(address: string): Awaitable<readonly RuleRecord[]>;
  /** Forgets the address's rules and what they remembered; returns how many rules there were. The log stays. */
  clearRules(address: string): Awaitable<number>;

  /**
   * Logs an attempt (the attempt feed's listener; `message`: the stored copy
   * beside an accepted attempt, by which one already logged by
   * `deliverUnlessRuled` is known). Never rejects: a failure is the lab's to
   * report.
   */
  record(attempt: SmtpAttempt, message?: StoredMessage): Awaitable<void>;
  /**
   * Resolves once every attempt recorded so far can be read through any
   * server; undefined when nothing is on its way (always, in memory). The
   * intake sends a reply only after the attempt it logs is readable.
   */
  flushed(): Promise<void> | undefined;
  /** The address's attempts, oldest first. */
  attempts(address: string): Awaitable<readonly LoggedAttempt[]>;

  /** Forgets everything about the address (its rules, their memory and its log), with its mailbox. */
  forget(address: string): Awaitable<void>;

  /** The end of DATA in one round trip, when this lab is kept beside `store` (Redis); undefined otherwise. */
  deliveryBeside?(store: MailStore): LabDelivery | undefined;
}
