// The lab's state in this process (lab-store.ts): the rule book over the
// memory rule store, and the attempt log. Every answer is synchronous, so
// the intake decides and replies in the same tick, as before the boundary.
import type { SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { WallClock } from '../base/clock.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import { AttemptLog, type LoggedAttempt } from './attempt-log.js';
import type { AddedRule, LabSender, LabStore, RuleStep } from './lab-store.js';
import { RuleBook, type RuleDecision } from './rule-book.js';
import { MemoryRuleStore } from './rule-store.js';
import type { RuleRecord, RuleSpec } from './rules.js';

export interface MemoryLabOptions {
  readonly clock: WallClock;
  /** How long attempts are kept, in ms (the server's retention). */
  readonly retention: number;
  readonly maxAttemptsPerAddress?: number;
  readonly maxAttempts?: number;
  /** Addresses whose rules are kept; past it the earliest set go first. */
  readonly maxAddresses?: number;
}

export class MemoryLabStore implements LabStore {
  readonly description = 'memory';
  readonly #book: RuleBook;
  readonly #log: AttemptLog;

  constructor(options: MemoryLabOptions) {
    this.#book = new RuleBook({ store: new MemoryRuleStore(options.maxAddresses), clock: options.clock });
    this.#log = new AttemptLog({
      clock: options.clock,
      retention: options.retention,
      maxPerAddress: options.maxAttemptsPerAddress,
      maxEntries: options.maxAttempts,
    });
  }

  step(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): RuleStep | undefined {
    const book = this.#book;
    let ruled: string[] | undefined;
    for (const to of recipients) if (book.has(to)) (ruled ??= []).push(to);
    if (!ruled) return undefined;
    let holdMs = 0;
    for (const to of ruled) holdMs = Math.max(holdMs, book.hold(to, stage));
    if (holdMs === 0) return { holdMs, heldFor: ruled[0]!, decision: this.decide(stage, ruled, sender) };
    const heldFor = ruled.find((to) => book.list(to).some((rule) => rule.kind === 'slow')) ?? ruled[0]!;
    return { holdMs, heldFor, decision: undefined };
  }

  decide(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): RuleDecision | undefined {
    for (const to of recipients) {
      if (!this.#book.has(to)) continue;
      const decision = this.#book.decide(stage, { clientIp: sender.clientIp, from: sender.from, to });
      if (decision) return decision;
    }
    return undefined;
  }

  addRule(address: string, spec: RuleSpec): AddedRule {
    const rule = this.#book.add(address, spec);
    return { rule, rules: this.#book.list(address) };
  }

  rules(address: string): readonly RuleRecord[] {
    return this.#book.list(address);
  }

  clearRules(address: string): number {
    return this.#book.clear(address);
  }

  record(attempt: SmtpAttempt): void {
    this.#log.record(attempt);
  }

  flushed(): undefined {
    return undefined;
  }

  attempts(address: string): readonly LoggedAttempt[] {
    return this.#log.list(address);
  }

  forget(address: string): void {
    this.#book.clear(address);
    this.#log.delete(address);
  }

  /** Attempts held, for tests of the log's bounds. */
  get loggedAttempts(): number {
    return this.#log.size;
  }
}
