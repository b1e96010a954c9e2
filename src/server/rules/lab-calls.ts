// The SMTP deferral lab's four calls (docs/CONTRACT.md, "SMTP rules"), for
// both doors that offer them: the HTTP API (http/lab/smtp-lab.ts) and the MCP
// tools (http/mcp/embedded-tools.ts). Each takes the address as the caller wrote
// it and answers the wire body, so a rule is checked by one parser
// (rule-input.ts), kept in one lab and refused with one slug, whichever door
// it came through. Setting, listing and clearing rules draw on no budget (a
// test sets a handful before it acts); reading the log is charged to the
// address's message budget, since a matcher or an agent polls it.
import { Refusal } from '../../contract/refusal.js';
import type { WireSmtpAttempts, WireSmtpRuleAdded, WireSmtpRules } from '../../contract/wire.js';
import type { RequestBudget } from '../budgets/budget.js';
import type { MailboxReader } from '../store/mailbox-reader.js';
import { mailIdentity } from '../store/mail-identity.js';
import type { MailStore } from '../store/mail-store.js';
import { toWireAttempt, type StoredIdentity } from './attempt-log.js';
import type { LabStore } from './lab-store.js';
import { TooManyRulesError } from './rule-book.js';
import { parseRuleInput } from './rule-input.js';
import { toWireRule } from './rules.js';

export interface LabCallsContext {
  /** Where the rules and the attempt log are kept (this process, or Redis). */
  readonly lab: LabStore;
  /** An accepted attempt's Message-ID and Subject, from its stored message. */
  readonly storedIdentity: StoredIdentity;
  readonly reader: MailboxReader;
  readonly messageBudget: RequestBudget;
}

export interface LabCalls {
  /** Throws the refusal for a missing or malformed address, or one at a domain the server does not serve. */
  checkAddress(address: string | undefined): void;
  /** The address's rules in the order they act. */
  rules(address: string | undefined): Promise<WireSmtpRules>;
  /** Checks `input` (a rule as the wire gives it, unchecked) and adds it after the address's others. */
  addRule(address: string | undefined, input: unknown): Promise<WireSmtpRuleAdded>;
  clearRules(address: string | undefined): Promise<{ cleared: number }>;
  /** The address's attempt log, oldest first (charged to its message budget). */
  attempts(address: string | undefined): Promise<WireSmtpAttempts>;
}

/** An accepted attempt's Message-ID and Subject, read from `store` while the message is kept. */
export function storedIdentityIn(store: MailStore): StoredIdentity {
  return async (to, storedId) => {
    const message = await store.get(to, storedId);
    return message ? mailIdentity(await message.content.source()) : undefined;
  };
}

/**
 * The calls on `ctx`. `address` is checked first (`invalid_request` when
 * missing, `invalid_address`, `unknown_domain`), then the rule; the answer
 * echoes the address as the caller wrote it (the contract's A).
 */
export function createLabCalls(ctx: LabCallsContext): LabCalls {
  const key = (address: string | undefined) => ctx.reader.mailboxKey(address, 'address');
  return {
    checkAddress(address) {
      key(address);
    },
    async rules(address) {
      const mailbox = key(address);
      return { address: address!, rules: (await ctx.lab.rules(mailbox)).map(toWireRule) };
    },
    async addRule(address, input) {
      const mailbox = key(address);
      let spec;
      try {
        spec = parseRuleInput(input);
      } catch (error) {
        throw new Refusal(400, 'invalid_request', `Invalid rule for ${address}: ${(error as Error).message}`);
      }
      try {
        const added = await ctx.lab.addRule(mailbox, spec);
        return { address: address!, rule: toWireRule(added.rule), rules: added.rules.map(toWireRule) };
      } catch (error) {
        if (error instanceof TooManyRulesError) throw new Refusal(400, 'invalid_request', error.message);
        throw error;
      }
    },
    async clearRules(address) {
      return { cleared: await ctx.lab.clearRules(key(address)) };
    },
    async attempts(address) {
      const mailbox = key(address);
      await ctx.messageBudget.spend(mailbox, 'message');
      const entries = await ctx.lab.attempts(mailbox);
      return { address: address!, attempts: await Promise.all(entries.map((entry) => toWireAttempt(entry, ctx.storedIdentity))) };
    },
  };
}
