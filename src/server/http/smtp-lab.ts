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
import { toWireAttempt, type StoredIdentity } from '../rules/attempt-log.js';
import type { LabStore } from '../rules/lab-store.js';
import { TooManyRulesError } from '../rules/rule-book.js';
import { parseRuleInput } from '../rules/rule-input.js';
import { toWireRule } from '../rules/rules.js';
import { readBodyUpTo } from './body.js';
import { singleParam } from './params.js';

export type SmtpLabCall = 'rules' | 'addRule' | 'clearRules' | 'attempts';

export interface SmtpLabContext {
  /** Where the rules and the attempt log are kept (this process, or Redis). */
  readonly lab: LabStore;
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
  switch (call) {
    case 'rules':
      return { address, rules: (await ctx.lab.rules(mailbox)).map(toWireRule) } satisfies WireSmtpRules;
    case 'addRule': {
      const body = await ruleBody(req);
      let spec;
      try {
        spec = parseRuleInput(body);
      } catch (error) {
        throw new Refusal(400, 'invalid_request', `Invalid rule for ${address}: ${(error as Error).message}`);
      }
      try {
        const added = await ctx.lab.addRule(mailbox, spec);
        return { address, rule: toWireRule(added.rule), rules: added.rules.map(toWireRule) } satisfies WireSmtpRuleAdded;
      } catch (error) {
        if (error instanceof TooManyRulesError) throw new Refusal(400, 'invalid_request', error.message);
        throw error;
      }
    }
    case 'clearRules':
      return { cleared: await ctx.lab.clearRules(mailbox) };
    case 'attempts':
      await ctx.messageBudget.spend(mailbox, 'message');
      return {
        address,
        attempts: await Promise.all((await ctx.lab.attempts(mailbox)).map((entry) => toWireAttempt(entry, ctx.storedIdentity))),
      } satisfies WireSmtpAttempts;
  }
}
