// The SMTP deferral lab's HTTP calls (docs/CONTRACT.md, "SMTP rules", an
// embedded-server extension): set, list and clear an address's rules, and
// read its attempt log. Setting and clearing rules draws on no budget (a
// test sets a handful before it acts); reading the log is charged to the
// address's message budget, since a matcher polls it.
import type { IncomingMessage } from 'node:http';
import { Refusal } from '../../contract/refusal.js';
import type { WireSmtpAttempts, WireSmtpRuleAdded, WireSmtpRules } from '../../contract/wire.js';
import type { RequestBudget } from '../budgets/budget.js';
import type { MailboxReader } from '../mailbox-reader.js';
import { toWireAttempt, type AttemptLog, type StoredIdentity } from '../rules/attempt-log.js';
import { TooManyRulesError, type RuleBook } from '../rules/rule-book.js';
import { parseRuleInput } from '../rules/rule-input.js';
import { toWireRule } from '../rules/rules.js';
import { readBodyUpTo } from './body.js';
import { singleParam } from './params.js';

export type SmtpLabCall = 'rules' | 'addRule' | 'clearRules' | 'attempts';

export interface SmtpLabContext {
  readonly rules: RuleBook;
  readonly log: AttemptLog;
  /** An accepted attempt's Message-ID and Subject, from its stored message. */
  readonly storedIdentity: StoredIdentity;
  readonly reader: MailboxReader;
  readonly messageBudget: RequestBudget;
}

const MAX_RULE_BODY = 16 * 1024;
const EXAMPLE = '{"kind": "greylist", "min_delay_ms": 2000}';

async function ruleBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readBodyUpTo(req, MAX_RULE_BODY);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `A rule's body is at most ${MAX_RULE_BODY} bytes`);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalid_request', `The body must be a JSON rule, like ${EXAMPLE}`);
  }
}

/** The answer's JSON body; refusals are thrown as `Refusal`. */
export async function answerSmtpLab(call: SmtpLabCall, params: URLSearchParams, req: IncomingMessage, ctx: SmtpLabContext): Promise<unknown> {
  const written = singleParam(params, 'address');
  const mailbox = ctx.reader.mailboxKey(written, 'address');
  const address = written!;
  const rulesOf = () => ctx.rules.list(mailbox).map(toWireRule);
  switch (call) {
    case 'rules':
      return { address, rules: rulesOf() } satisfies WireSmtpRules;
    case 'addRule': {
      const body = await ruleBody(req);
      let spec;
      try {
        spec = parseRuleInput(body);
      } catch (error) {
        throw new Refusal(400, 'invalid_request', `Invalid rule for ${address}: ${(error as Error).message}`);
      }
      try {
        const rule = toWireRule(ctx.rules.add(mailbox, spec));
        return { address, rule, rules: rulesOf() } satisfies WireSmtpRuleAdded;
      } catch (error) {
        if (error instanceof TooManyRulesError) throw new Refusal(400, 'invalid_request', error.message);
        throw error;
      }
    }
    case 'clearRules':
      return { cleared: ctx.rules.clear(mailbox) };
    case 'attempts':
      await ctx.messageBudget.spend(mailbox, 'message');
      return {
        address,
        attempts: await Promise.all(ctx.log.list(mailbox).map((entry) => toWireAttempt(entry, ctx.storedIdentity))),
      } satisfies WireSmtpAttempts;
  }
}
