// A rule as the HTTP API receives it, checked field by field and defaulted
// here, in one place. Every mistake names the wire field and the value
// (``Expected `min_delay_ms` to be …, got …``); the API answers it as
// `400 invalid_request`. Unknown fields are refused, so a misspelt one never
// silently falls back to a default.
import {
  DEFAULT_ENHANCED,
  DEFER_CODES,
  REJECT_CODES,
  RULE_DEFAULTS,
  SMTP_RULE_KINDS,
  SMTP_RULE_LIMITS,
  SMTP_RULE_STAGES,
  API_RULE_SMTP_REPLY,
  UNAVAILABLE_STATUSES,
  enhancedFits,
  isReplyText,
  type SmtpRuleStage,
} from '../../contract/smtp-lab.js';
import { describeValue, expectedError } from '../../contract/validation.js';
import type { RuleSpec } from './rules.js';

const FIELDS: Readonly<Record<RuleSpec['kind'], readonly string[]>> = {
  greylist: ['min_delay_ms', 'reset_on_early_retry'],
  throttle: ['limit', 'per_ms'],
  defer: ['code', 'enhanced_code', 'text', 'stage', 'times'],
  reject: ['code', 'enhanced_code', 'text', 'stage', 'times'],
  slow: ['delay_ms', 'stage', 'times'],
  disconnect: ['stage', 'times'],
  rate_limit: ['retry_after_ms', 'stage', 'times'],
  unavailable: ['status', 'stage', 'times'],
};

function wholeNumber(body: Record<string, unknown>, field: string, min: number, max: number, what: string): number | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw expectedError(field, `${what} from ${min} to ${max}`, value);
  }
  return value;
}

function required<T>(value: T | undefined, field: string, kind: string, what: string): T {
  if (value === undefined) throw new TypeError(`A ${kind} rule needs \`${field}\` (${what})`);
  return value;
}

function stageOf(body: Record<string, unknown>, fallback: SmtpRuleStage): SmtpRuleStage {
  const stage = body.stage ?? fallback;
  if (!SMTP_RULE_STAGES.includes(stage as SmtpRuleStage)) throw expectedError('stage', '"rcpt" or "data"', stage);
  return stage as SmtpRuleStage;
}

function timesOf(body: Record<string, unknown>, fallback: number): number {
  return wholeNumber(body, 'times', 1, SMTP_RULE_LIMITS.maxTimes, 'a whole number of attempts') ?? fallback;
}

function replyOf(body: Record<string, unknown>, codes: readonly number[], fallback: number): { code: number; enhancedCode: string; text: string | null } {
  const code = body.code ?? fallback;
  if (typeof code !== 'number' || !codes.includes(code)) throw expectedError('code', codes.join(', ').replace(/, (\d+)$/, ' or $1'), code);
  const enhanced = body.enhanced_code ?? DEFAULT_ENHANCED[code]!;
  if (typeof enhanced !== 'string' || !enhancedFits(code, enhanced)) {
    throw expectedError('enhanced_code', `an enhanced status code of the same class as ${code}, like "${DEFAULT_ENHANCED[code]}"`, enhanced);
  }
  const text = body.text;
  if (text !== undefined && !isReplyText(text)) {
    throw expectedError('text', `one line of printable ASCII, 1 to ${SMTP_RULE_LIMITS.maxTextLength} characters`, text);
  }
  return { code, enhancedCode: enhanced, text: text ?? null };
}

/** Checks a rule as the API received it and fills in its defaults; throws a TypeError naming the field. */
export function parseRuleInput(input: unknown): RuleSpec {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new TypeError(`Expected the rule to be a JSON object like {"kind": "greylist", "min_delay_ms": 2000}, got ${describeValue(input)}`);
  }
  const body = input as Record<string, unknown>;
  const kind = body.kind;
  if (!SMTP_RULE_KINDS.includes(kind as RuleSpec['kind'])) {
    throw expectedError('kind', SMTP_RULE_KINDS.map((k) => `"${k}"`).join(', '), kind);
  }
  const fields = FIELDS[kind as RuleSpec['kind']];
  for (const key of Object.keys(body)) {
    if (key !== 'kind' && !fields.includes(key)) {
      throw new TypeError(`Unknown field \`${key}\` for a ${String(kind)} rule; it takes ${fields.map((f) => `\`${f}\``).join(', ')}`);
    }
  }
  const { maxWindowMs, maxDelayMs, maxLimit } = SMTP_RULE_LIMITS;
  switch (kind as RuleSpec['kind']) {
    case 'greylist': {
      const reset = body.reset_on_early_retry ?? RULE_DEFAULTS.greylist.resetOnEarlyRetry;
      if (typeof reset !== 'boolean') throw expectedError('reset_on_early_retry', 'true or false', reset);
      return Object.freeze({
        kind: 'greylist',
        minDelayMs: wholeNumber(body, 'min_delay_ms', 0, maxWindowMs, 'a whole number of milliseconds') ?? RULE_DEFAULTS.greylist.minDelayMs,
        resetOnEarlyRetry: reset,
      });
    }
    case 'throttle':
      return Object.freeze({
        kind: 'throttle',
        limit: required(wholeNumber(body, 'limit', 0, maxLimit, 'a whole number of messages'), 'limit', 'throttle', 'messages allowed per window'),
        perMs: wholeNumber(body, 'per_ms', 1, maxWindowMs, 'a whole number of milliseconds') ?? RULE_DEFAULTS.throttle.perMs,
      });
    case 'defer':
    case 'reject': {
      const k = kind as 'defer' | 'reject';
      const defaults = RULE_DEFAULTS[k];
      const reply = replyOf(body, k === 'defer' ? DEFER_CODES : REJECT_CODES, defaults.code);
      return Object.freeze({ kind: k, ...reply, stage: stageOf(body, defaults.stage), times: timesOf(body, defaults.times) });
    }
    case 'slow': {
      // Silent throttling lasts until cleared, unless `times` says otherwise.
      const times = body.times === undefined || body.times === null ? RULE_DEFAULTS.slow.times : timesOf(body, 1);
      return Object.freeze({
        kind: 'slow',
        delayMs: required(
          wholeNumber(body, 'delay_ms', 0, maxDelayMs, 'a whole number of milliseconds'),
          'delay_ms',
          'slow',
          'how long the reply is held, in ms',
        ),
        stage: stageOf(body, RULE_DEFAULTS.slow.stage),
        times,
      });
    }
    case 'disconnect':
      return Object.freeze({ kind: 'disconnect', stage: stageOf(body, RULE_DEFAULTS.disconnect.stage), times: timesOf(body, RULE_DEFAULTS.disconnect.times) });
    case 'rate_limit':
      return Object.freeze({
        kind: 'rate_limit',
        retryAfterMs: wholeNumber(body, 'retry_after_ms', 0, maxWindowMs, 'a whole number of milliseconds') ?? RULE_DEFAULTS.rate_limit.retryAfterMs,
        ...API_RULE_SMTP_REPLY.rate_limit,
        stage: stageOf(body, RULE_DEFAULTS.rate_limit.stage),
        times: timesOf(body, RULE_DEFAULTS.rate_limit.times),
      });
    case 'unavailable': {
      const status = body.status ?? RULE_DEFAULTS.unavailable.status;
      if (typeof status !== 'number' || !UNAVAILABLE_STATUSES.includes(status))
        throw expectedError('status', UNAVAILABLE_STATUSES.join(', ').replace(/, (\d+)$/, ' or $1'), status);
      return Object.freeze({
        kind: 'unavailable',
        status,
        ...API_RULE_SMTP_REPLY.unavailable,
        stage: stageOf(body, RULE_DEFAULTS.unavailable.stage),
        times: timesOf(body, RULE_DEFAULTS.unavailable.times),
      });
    }
  }
}
