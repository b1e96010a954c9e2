// The rules of every address and what they decide. The SMTP intake asks two
// questions, and only for a recipient whose address has rules (`has`):
// how long to hold the reply at this stage (`hold`: slow rules), and then
// what to answer (`decide`: the first rule in the order they were set that
// has something to say). Nothing here knows SMTP or HTTP: a decision is a
// code, an enhanced code and a text, or "drop the connection".
import type { SmtpRuleKind, SmtpRuleStage } from '../../contract/smtp-lab.js';
import { SMTP_RULE_LIMITS } from '../../contract/smtp-lab.js';
import type { WallClock } from '../base/clock.js';
import { greylist, tripleKey } from './greylist.js';
import { emptyAddressRules, type AddressRules, type RuleRecord, type RuleSpec } from './rules.js';
import type { RuleStore } from './rule-store.js';
import { pruneAccepted, throttle } from './throttle.js';

export type RuleDecision =
  | {
      readonly action: 'reply';
      readonly code: number;
      readonly enhancedCode: string;
      readonly text: string;
      readonly rule: SmtpRuleKind;
      /** When the sender may come back, where the rule knows (a provider API answers it as `Retry-After`). */
      readonly retryAfterMs?: number | undefined;
      /** The HTTP status a provider API answers with (`unavailable` rules). */
      readonly httpStatus?: number | undefined;
    }
  /** Close the connection without a reply; `text` is what the attempt log says happened. */
  | { readonly action: 'drop'; readonly text: string; readonly rule: SmtpRuleKind };

/** The attempt being decided: who is sending to whom. */
export interface AttemptParties {
  readonly clientIp: string;
  /** MAIL FROM, `''` for the null sender. */
  readonly from: string;
  /** The recipient's mailbox key. */
  readonly to: string;
}

/** Thrown by `add` when the address already holds the most rules it may. */
export class TooManyRulesError extends Error {
  constructor(address: string, live: number) {
    super(`${address} already has ${live} rules, the most one address may hold; clear them (DELETE) before setting more`);
  }
}

const DEFAULT_TEXT: Readonly<Record<'defer' | 'reject', string>> = {
  defer: 'Deferred, try again later',
  reject: 'Refused permanently, do not retry',
};

/** `2 s`, `1.5 s`, `800 ms`: a duration as a reply text says it. */
export function spokenMs(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** Every reply a rule writes says that it is a test rule, which one, and for whom. */
function tagged(detail: string, kind: SmtpRuleKind, address: string): string {
  return `${detail} (mailroom test rule: ${kind} on ${address})`;
}

/**
 * Which rule answered and with what numbers, as plain data: the memory
 * store works it out here, the Redis store in its script (redis/scripts/),
 * and both are put into words by `decisionOf`, so a reply reads the same
 * whichever store the server runs on.
 */
export type RuleVerdict =
  | { readonly kind: 'disconnect' }
  | { readonly kind: 'defer' | 'reject'; readonly code: number; readonly enhancedCode: string; readonly text: string | null }
  | { readonly kind: 'rate_limit'; readonly code: number; readonly enhancedCode: string; readonly retryAfterMs: number }
  | { readonly kind: 'unavailable'; readonly code: number; readonly enhancedCode: string; readonly status: number }
  | { readonly kind: 'throttle'; readonly limit: number; readonly perMs: number; readonly inWindow: number }
  | { readonly kind: 'greylist'; readonly reason: 'first' | 'early'; readonly retryInMs: number; readonly restarted: boolean };

/** The reply (or the drop) a verdict means for the recipient `to`. */
export function decisionOf(verdict: RuleVerdict, to: string): RuleDecision {
  switch (verdict.kind) {
    case 'disconnect':
      return { action: 'drop', rule: 'disconnect', text: tagged('Connection dropped without a reply', 'disconnect', to) };
    case 'defer':
    case 'reject':
      return {
        action: 'reply',
        code: verdict.code,
        enhancedCode: verdict.enhancedCode,
        text: tagged(verdict.text ?? DEFAULT_TEXT[verdict.kind], verdict.kind, to),
        rule: verdict.kind,
      };
    case 'rate_limit': {
      const detail = `Rate limited: too many requests, try again in ${spokenMs(verdict.retryAfterMs)}`;
      const { code, enhancedCode, retryAfterMs } = verdict;
      return { action: 'reply', code, enhancedCode, text: tagged(detail, 'rate_limit', to), rule: 'rate_limit', retryAfterMs };
    }
    case 'unavailable': {
      const { code, enhancedCode, status } = verdict;
      const detail = `Service unavailable (${status}), try again later`;
      return { action: 'reply', code, enhancedCode, text: tagged(detail, 'unavailable', to), rule: 'unavailable', httpStatus: status };
    }
    case 'throttle': {
      const detail = `Too many messages for this address: the limit is ${verdict.limit} per ${spokenMs(verdict.perMs)} and ${verdict.inWindow} came in that time; slow down`;
      // A sender let in again once the window has moved on: a full window is the most it waits.
      return { action: 'reply', code: 421, enhancedCode: '4.7.0', text: tagged(detail, 'throttle', to), rule: 'throttle', retryAfterMs: verdict.perMs };
    }
    case 'greylist': {
      const detail =
        verdict.reason === 'first'
          ? `Greylisted: first attempt from this client and sender, try again in ${spokenMs(verdict.retryInMs)}`
          : verdict.restarted
            ? `Greylisted: retried too soon, so the wait starts again; try again in ${spokenMs(verdict.retryInMs)}`
            : `Greylisted: retried too soon, try again in ${spokenMs(verdict.retryInMs)}`;
      return { action: 'reply', code: 451, enhancedCode: '4.7.1', text: tagged(detail, 'greylist', to), rule: 'greylist', retryAfterMs: verdict.retryInMs };
    }
  }
}

function acts(rule: RuleRecord, stage: SmtpRuleStage): boolean {
  return 'stage' in rule && rule.stage === stage && rule.remaining !== 0;
}

function spend(rule: RuleRecord): void {
  if (rule.remaining !== null) rule.remaining--;
}

export class RuleBook {
  readonly #store: RuleStore;
  readonly #clock: WallClock;

  constructor(options: { readonly store: RuleStore; readonly clock: WallClock }) {
    this.#store = options.store;
    this.#clock = options.clock;
  }

  /** True when the address has rules (or greylisting memory): the only question asked of every recipient. */
  has(address: string): boolean {
    return this.#store.has(address);
  }

  /** Adds a rule after the address's others; returns it as stored. */
  add(address: string, spec: RuleSpec): RuleRecord {
    const state = this.#store.get(address) ?? emptyAddressRules();
    const live = state.rules.filter((rule) => rule.remaining !== 0);
    if (live.length >= SMTP_RULE_LIMITS.maxRulesPerAddress) {
      throw new TooManyRulesError(address, live.length);
    }
    const remaining = 'times' in spec ? spec.times : null;
    const record: RuleRecord = { ...spec, id: `r${state.nextId}`, setAt: this.#clock.now(), remaining };
    state.nextId++;
    // Used-up rules are dropped when a new one comes, so the list stays short.
    state.rules = [...live, record];
    this.#store.set(address, state);
    return record;
  }

  /** The address's rules in the order they act, used-up ones included (remaining 0). */
  list(address: string): readonly RuleRecord[] {
    return this.#store.get(address)?.rules ?? [];
  }

  /** Forgets the address's rules and everything they remembered; returns how many rules there were. */
  clear(address: string): number {
    const count = this.#store.get(address)?.rules.length ?? 0;
    this.#store.delete(address);
    return count;
  }

  /** How long to hold the reply to `address` at `stage` (the longest of its slow rules), spending those rules. */
  hold(address: string, stage: SmtpRuleStage): number {
    const state = this.#store.get(address);
    if (!state) return 0;
    let delayMs = 0;
    let changed = false;
    for (const rule of state.rules) {
      if (rule.kind !== 'slow' || !acts(rule, stage)) continue;
      delayMs = Math.max(delayMs, rule.delayMs);
      spend(rule);
      changed = true;
    }
    if (changed) this.#store.set(address, state);
    return delayMs;
  }

  /**
   * What to answer the recipient `parties.to` at `stage`, or undefined when
   * no rule has anything to say (the server answers as it would anyway).
   * At RCPT, a recipient let through counts toward the address's throttles.
   */
  decide(stage: SmtpRuleStage, parties: AttemptParties): RuleDecision | undefined {
    const state = this.#store.get(parties.to);
    if (!state) return undefined;
    const now = this.#clock.now();
    const decision = this.#firstDecision(state, stage, parties, now);
    if (stage === 'rcpt' && decision === undefined) this.#countAccepted(state, now);
    this.#store.set(parties.to, state);
    return decision;
  }

  #firstDecision(state: AddressRules, stage: SmtpRuleStage, parties: AttemptParties, now: number): RuleDecision | undefined {
    const verdict = this.#firstVerdict(state, stage, parties, now);
    return verdict && decisionOf(verdict, parties.to);
  }

  #firstVerdict(state: AddressRules, stage: SmtpRuleStage, parties: AttemptParties, now: number): RuleVerdict | undefined {
    for (const rule of state.rules) {
      switch (rule.kind) {
        case 'disconnect':
          if (!acts(rule, stage)) break;
          spend(rule);
          return { kind: 'disconnect' };
        case 'defer':
        case 'reject':
          if (!acts(rule, stage)) break;
          spend(rule);
          return { kind: rule.kind, code: rule.code, enhancedCode: rule.enhancedCode, text: rule.text };
        case 'rate_limit':
          if (!acts(rule, stage)) break;
          spend(rule);
          return { kind: rule.kind, code: rule.code, enhancedCode: rule.enhancedCode, retryAfterMs: rule.retryAfterMs };
        case 'unavailable':
          if (!acts(rule, stage)) break;
          spend(rule);
          return { kind: rule.kind, code: rule.code, enhancedCode: rule.enhancedCode, status: rule.status };
        case 'throttle': {
          if (stage !== 'rcpt') break;
          const answer = throttle(state.accepted, rule, now);
          if (!answer.throttled) break;
          return { kind: 'throttle', limit: rule.limit, perMs: rule.perMs, inWindow: answer.inWindow };
        }
        case 'greylist': {
          if (stage !== 'rcpt') break;
          const answer = greylist(state.triples, rule, tripleKey(parties.clientIp, parties.from, parties.to), now);
          if (answer.pass) break;
          return { kind: 'greylist', reason: answer.reason, retryInMs: answer.retryInMs, restarted: answer.restarted };
        }
        case 'slow':
          break;
      }
    }
    return undefined;
  }

  #countAccepted(state: AddressRules, now: number): void {
    let keepMs = 0;
    for (const rule of state.rules) if (rule.kind === 'throttle') keepMs = Math.max(keepMs, rule.perMs);
    if (keepMs === 0) {
      state.accepted.length = 0;
      return;
    }
    pruneAccepted(state.accepted, now, keepMs);
    state.accepted.push(now);
  }
}
