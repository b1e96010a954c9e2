// The SMTP deferral lab's state in Redis (rules/lab-store.ts), beside the
// Redis mail store and on its connection, so every server on that Redis
// applies the same rules: a rule set through one acts on SMTP taken in by
// another, greylisted triples and throttle windows are counted once for all
// of them, and the attempt log read through one shows attempts made on any.
// Each call is one run of scripts/lab.lua (atomic, one round trip).
//
// Attempts are written as the attempt feed publishes them; `flushed()` lets
// the intake hold a reply until the attempt it logged is in Redis, so a read
// through any server after the reply shows it. A write that fails (Redis
// out of reach) loses that entry: the loss is logged, once per run of
// failures, and the SMTP reply is what it would have been.
import type { SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { Logger } from '../base/log.js';
import type { LoggedAttempt } from '../rules/attempt-log.js';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_ATTEMPTS_PER_ADDRESS } from '../rules/attempt-log.js';
import { MAX_TRIPLES_PER_ADDRESS, tripleKey } from '../rules/greylist.js';
import type { AddedRule, LabSender, LabStore, RuleStep } from '../rules/lab-store.js';
import { decisionOf, TooManyRulesError, type RuleDecision, type RuleVerdict } from '../rules/rule-book.js';
import type { RuleRecord, RuleSpec } from '../rules/rules.js';
import { SMTP_RULE_LIMITS } from '../../contract/smtp-lab.js';
import type { WallClock } from '../base/clock.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import type { RedisConnection, RedisReply } from './redis-connection.js';
import { luaScript } from './lua-scripts.js';

const LAB_SCRIPT = luaScript('lab');

export interface RedisLabOptions {
  readonly connection: RedisConnection;
  readonly prefix: string;
  readonly clock: WallClock;
  /** How long attempts are kept, in ms (the server's retention); keys expire a margin after it. */
  readonly retention: number;
  /** Redis forgets a key this long after the retention, whether or not any server is left. */
  readonly expiryMarginMs: number;
  readonly logger: Logger;
  readonly maxAttemptsPerAddress?: number | undefined;
  readonly maxAttempts?: number | undefined;
}

const text = (value: RedisReply | undefined): string => (Buffer.isBuffer(value) ? value.toString('utf8') : value == null ? '' : String(value));

/** The verdict from the script's flat answer, from `at` on: kind, recipient, then the kind's fields. */
function verdictAt(reply: readonly RedisReply[], at: number): { verdict: RuleVerdict; to: string } | undefined {
  if (reply.length <= at) return undefined;
  const kind = text(reply[at]);
  const to = text(reply[at + 1]);
  const field = (n: number) => text(reply[at + 2 + n]);
  switch (kind) {
    case 'disconnect':
      return { to, verdict: { kind } };
    case 'defer':
    case 'reject':
      return { to, verdict: { kind, code: Number(field(0)), enhancedCode: field(1), text: field(2) === '' ? null : field(2) } };
    case 'throttle':
      return { to, verdict: { kind, limit: Number(field(0)), perMs: Number(field(1)), inWindow: Number(field(2)) } };
    case 'greylist':
      return { to, verdict: { kind, reason: field(0) === 'first' ? 'first' : 'early', retryInMs: Number(field(1)), restarted: field(2) === '1' } };
    default:
      throw new Error(`mailroom: the lab script answered an unknown verdict ${JSON.stringify(kind)}`);
  }
}

function decisionAt(reply: readonly RedisReply[], at: number): RuleDecision | undefined {
  const found = verdictAt(reply, at);
  return found && decisionOf(found.verdict, found.to);
}

export class RedisLabStore implements LabStore {
  readonly description: string;
  readonly #connection: RedisConnection;
  readonly #options: RedisLabOptions;
  readonly #maxPerAddress: number;
  readonly #maxAttempts: number;
  /** The latest attempt write still on its way (replies come back in order on the one connection). */
  #lastWrite: Promise<void> | undefined;
  #writing = 0;
  /** Attempts lost since the last write that went through. */
  #lost = 0;

  constructor(options: RedisLabOptions) {
    this.#connection = options.connection;
    this.#options = options;
    this.description = options.connection.description;
    this.#maxPerAddress = options.maxAttemptsPerAddress ?? DEFAULT_MAX_ATTEMPTS_PER_ADDRESS;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  }

  async step(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): Promise<RuleStep | undefined> {
    // Most recipients have no rules: one EXISTS (a few times cheaper than a script run) answers for them.
    // The key is the script's P:lab:r:<mailbox>; a rule set or cleared in between is met by the script.
    const rulesKeys = recipients.map((to) => `${this.#options.prefix}:lab:r:${to}`);
    if (rulesKeys.length === 0 || Number(await this.#connection.run(['EXISTS', ...rulesKeys])) === 0) return undefined;
    const reply = (await this.#call('step', this.#decisionArgs(stage, recipients, sender))) as RedisReply[];
    if (reply.length === 0) return undefined;
    const holdMs = Number(text(reply[0]));
    return { holdMs, heldFor: text(reply[1]), decision: holdMs > 0 ? undefined : decisionAt(reply, 2) };
  }

  async decide(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): Promise<RuleDecision | undefined> {
    return decisionAt((await this.#call('decide', this.#decisionArgs(stage, recipients, sender))) as RedisReply[], 0);
  }

  async addRule(address: string, spec: RuleSpec): Promise<AddedRule> {
    const record = { ...spec, setAt: this.#options.clock.now(), remaining: 'times' in spec ? spec.times : null };
    const [added, answer] = (await this.#call('add', [address, JSON.stringify(record), String(SMTP_RULE_LIMITS.maxRulesPerAddress)])) as RedisReply[];
    if (Number(added) !== 1) throw new TooManyRulesError(address, Number(answer));
    const rules = JSON.parse(text(answer)) as RuleRecord[];
    return { rule: rules[rules.length - 1]!, rules };
  }

  async rules(address: string): Promise<readonly RuleRecord[]> {
    const json = text(await this.#call('rules', [address]));
    return json === '' ? [] : (JSON.parse(json) as RuleRecord[]);
  }

  async clearRules(address: string): Promise<number> {
    return Number(await this.#call('clear', [address]));
  }

  record(attempt: SmtpAttempt): Promise<void> {
    this.#writing++;
    const written = this.#call('record', [
      attempt.to,
      String(attempt.at),
      JSON.stringify(attempt),
      String(this.#maxPerAddress),
      String(this.#maxAttempts),
    ]).then(
      () => {
        if (this.#lost > 0) {
          this.#options.logger.warn(`mailroom: the SMTP attempt log (${this.description}) is written again; ${this.#lost} attempts were not logged`);
          this.#lost = 0;
        }
      },
      (error: unknown) => {
        if (this.#lost++ === 0) {
          this.#options.logger.error(
            `mailroom: could not log an SMTP attempt for ${attempt.to} (${this.description}): ${error instanceof Error ? error.message : String(error)}; the SMTP replies are unchanged`,
          );
        }
      },
    );
    const last = written.finally(() => {
      if (--this.#writing === 0) this.#lastWrite = undefined;
    });
    this.#lastWrite = last;
    return last;
  }

  flushed(): Promise<void> | undefined {
    return this.#lastWrite;
  }

  async attempts(address: string): Promise<readonly LoggedAttempt[]> {
    const reply = (await this.#call('attempts', [address, String(this.#maxAttempts)])) as RedisReply[];
    const oldestKept = this.#options.clock.now() - this.#options.retention;
    const entries: LoggedAttempt[] = [];
    for (const member of reply) {
      const raw = text(member);
      const entry = JSON.parse(raw.slice(raw.indexOf(' ') + 1)) as LoggedAttempt;
      // the script's sweep is bounded: what it has not reached yet is left out here
      if (entry.at > oldestKept) entries.push(entry);
    }
    return entries;
  }

  async forget(address: string): Promise<void> {
    await this.#call('forget', [address]);
  }

  /** Attempts held in all, for tests of the bounds. */
  async loggedAttempts(): Promise<number> {
    return Number(await this.#call('count', [String(this.#maxAttempts)]));
  }

  #decisionArgs(stage: SmtpRuleStage, recipients: readonly string[], sender: LabSender): string[] {
    // greylisting acts at RCPT only, where there is one recipient
    const triple = stage === 'rcpt' && recipients.length === 1 ? tripleKey(sender.clientIp, sender.from, recipients[0]!) : '';
    return [stage, triple, String(MAX_TRIPLES_PER_ADDRESS), ...recipients];
  }

  #call(op: string, args: readonly string[]): Promise<RedisReply> {
    const { prefix, clock, retention, expiryMarginMs } = this.#options;
    return this.#connection.script(LAB_SCRIPT, [], [prefix, op, String(clock.now()), String(retention), String(retention + expiryMarginMs), ...args]);
  }
}
