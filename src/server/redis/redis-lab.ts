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
//
// Mail to addresses without rules costs one round trip at the end of DATA
// (`deliveryBeside`): the store's script looks for rules, stores the mail
// and logs its accepted attempts in one run (redis-store.ts deliverLogged),
// where it would otherwise cost a look-up, the delivery and a log write.
import type { SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { Logger } from '../base/log.js';
import type { LoggedAttempt } from '../rules/attempt-log.js';
import { decodeAttemptEntry, encodeAttemptEntry } from '../rules/attempt-entry.js';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_ATTEMPTS_PER_ADDRESS } from '../rules/attempt-log.js';
import { MAX_TRIPLES_PER_ADDRESS, tripleKey } from '../rules/greylist.js';
import type { AddedRule, DeliveredCopy, LabDelivery, LabSender, LabStore, RuleStep } from '../rules/lab-store.js';
import { decisionOf, TooManyRulesError, type RuleDecision, type RuleVerdict } from '../rules/rule-book.js';
import type { RuleRecord, RuleSpec } from '../rules/rules.js';
import { SMTP_RULE_LIMITS } from '../../contract/smtp-lab.js';
import type { WallClock } from '../base/clock.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import type { StoredMessage } from '../base/stored-message.js';
import type { MailStore } from '../store/mail-store.js';
import type { RedisConnection, RedisReply } from './redis-connection.js';
import { luaScript } from './lua-scripts.js';

const LAB_SCRIPT = luaScript('lab');

/** The attempt log's entries a delivery writes with it (`deliverLogged`), made here. */
export interface DeliveryLog {
  /** One per mailbox, in their order: the attempt's time, and the attempt as JSON with a NUL byte wherever the copy's id goes. */
  readonly entries: readonly { readonly at: number; readonly json: string }[];
  readonly maxPerAddress: number;
  readonly maxAttempts: number;
}

/** The Redis mail store as the lab sees it (redis-store.ts): a delivery with the lab's look-up and its log in the same script run. */
export interface StoreBesideLab extends MailStore {
  /** Stores the mail unless one of `mailboxes` (distinct) has rules, writing `log` with it; undefined when one has rules. */
  deliverLogged(mailboxes: readonly string[], raw: Buffer, envelopeFrom: string, log: DeliveryLog): Promise<StoredMessage[] | undefined>;
}

export interface RedisLabOptions {
  readonly connection: RedisConnection;
  /** The mail store in the same Redis, whose script stores mail with the lab's look-up and log (`deliveryBeside`). */
  readonly store?: StoreBesideLab | undefined;
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
    case 'rate_limit':
      return { to, verdict: { kind, code: Number(field(0)), enhancedCode: field(1), retryAfterMs: Number(field(2)) } };
    case 'unavailable':
      return { to, verdict: { kind, code: Number(field(0)), enhancedCode: field(1), status: Number(field(2)) } };
    case 'throttle':
      return { to, verdict: { kind, limit: Number(field(0)), perMs: Number(field(1)), inWindow: Number(field(2)) } };
    case 'greylist':
      return { to, verdict: { kind, reason: field(0) === 'first' ? 'first' : 'early', retryInMs: Number(field(1)), restarted: field(2) === '1' } };
    default:
      throw new Error(`mailroom: the lab script answered an unknown verdict ${JSON.stringify(kind)}`);
  }
}

/**
 * Where a copy's id goes in a log entry the store's script writes: a NUL
 * byte, which JSON.stringify never writes raw (it escapes every control
 * character), so the script finds only the holes made here.
 */
const ID_HOLE = '\u0000';

/**
 * The attempt's log entry (attempt-entry.ts) with a raw ID_HOLE wherever a
 * string of it held one: the script fills in the id (ids are base-36 digits,
 * written as they are).
 */
function entryWithHoles(attempt: SmtpAttempt): string {
  return encodeAttemptEntry(attempt, (value) =>
    value.includes(ID_HOLE)
      ? `"${value
          .split(ID_HOLE)
          .map((piece) => JSON.stringify(piece).slice(1, -1))
          .join(ID_HOLE)}"`
      : JSON.stringify(value),
  );
}

const holdsHole = (attempt: SmtpAttempt) => Object.values(attempt).some((value) => typeof value === 'string' && value.includes(ID_HOLE));

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
  /** Copies whose accepted attempt the store's script logged as it stored them: `record` passes over it. */
  readonly #loggedWithDelivery = new WeakSet<StoredMessage>();
  readonly #delivery: LabDelivery | undefined;

  constructor(options: RedisLabOptions) {
    this.#connection = options.connection;
    this.#options = options;
    this.description = options.connection.description;
    this.#maxPerAddress = options.maxAttemptsPerAddress ?? DEFAULT_MAX_ATTEMPTS_PER_ADDRESS;
    this.#maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    const store = options.store;
    this.#delivery = store && { deliverUnlessRuled: (...args) => this.#deliverUnlessRuled(store, ...args) };
  }

  deliveryBeside(store: MailStore): LabDelivery | undefined {
    return store === this.#options.store ? this.#delivery : undefined;
  }

  async #deliverUnlessRuled(
    store: StoreBesideLab,
    mailboxes: readonly string[],
    raw: Buffer,
    envelopeFrom: string,
    accepted: (copies: readonly DeliveredCopy[]) => readonly SmtpAttempt[],
  ): Promise<readonly StoredMessage[] | undefined> {
    const unique = [...new Set(mailboxes)];
    // A NUL of the sender's own (in MAIL FROM, say) would read as a hole: such mail takes the usual way, where the log is written as it is.
    if (accepted(unique.map((mailbox) => ({ id: '0', mailbox }))).some(holdsHole)) return undefined;
    const entries = accepted(unique.map((mailbox) => ({ id: ID_HOLE, mailbox }))).map((attempt) => ({ at: attempt.at, json: entryWithHoles(attempt) }));
    const stored = await store.deliverLogged(unique, raw, envelopeFrom, { entries, maxPerAddress: this.#maxPerAddress, maxAttempts: this.#maxAttempts });
    for (const message of stored ?? []) this.#loggedWithDelivery.add(message);
    return stored;
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

  record(attempt: SmtpAttempt, message?: StoredMessage): Promise<void> {
    if (message && this.#loggedWithDelivery.has(message)) return Promise.resolve();
    this.#writing++;
    const written = this.#call('record', [
      attempt.to,
      String(attempt.at),
      encodeAttemptEntry(attempt),
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
      const entry = decodeAttemptEntry(raw.slice(raw.indexOf(' ') + 1), address);
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
