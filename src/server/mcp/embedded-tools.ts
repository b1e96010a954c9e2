// The MCP tools on the embedded server: the store read directly, with the same
// refusals and budgets as the HTTP API (mailbox.ts), and `wait_for_message`
// held by `holdForMail` in one of the server's 8 MCP wait slots.
import type { Budget } from '../budgets/budget.js';
import { isWellFormedId } from '../store/ids.js';
import type { MailboxReader } from '../mailbox-reader.js';
import type { MailTools, WaitArguments, WaitAnswer } from '../../mcp/tools.js';
import { DEFAULT_LIMIT, parseSinceId } from '../http/params.js';
import { Refusal, rateRefusal } from '../../contract/refusal.js';
import type { MessageStore } from '../store/message-store.js';
import { containsFilter, holdForMail, type WaitSlots } from '../waits/hold-for-mail.js';

/** The contract's number: 8 wait slots in the whole server, no queue. */
export const MCP_WAIT_SLOTS = 8;

export interface EmbeddedToolsContext {
  readonly store: MessageStore;
  readonly reader: MailboxReader;
  readonly listBudget: Budget;
  readonly messageBudget: Budget;
  readonly slots: WaitSlots;
}

function spend(budget: Budget, mailbox: string, what: string): void {
  const decision = budget.take(mailbox);
  if (!decision.allowed) throw rateRefusal(mailbox, what, budget, decision);
}

function checkId(id: string): void {
  if (!isWellFormedId(id)) {
    throw new Refusal(400, 'invalid_request', `Malformed message id ${JSON.stringify(id)}: an id is 11 characters of 0-9 and a-z, as list_messages returns them`);
  }
}

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

export function createEmbeddedTools(ctx: EmbeddedToolsContext): MailTools {
  const { store, reader } = ctx;
  return {
    async listMessages(address, limit) {
      const mailbox = reader.mailboxKey(address, 'address');
      spend(ctx.listBudget, mailbox, 'list');
      return { address, messages: await reader.listing(mailbox, limit ?? DEFAULT_LIMIT) };
    },

    async getMessage(address, id) {
      const mailbox = reader.mailboxKey(address, 'address');
      checkId(id);
      spend(ctx.messageBudget, mailbox, 'message');
      const message = store.get(mailbox, id);
      if (!message) throw new Refusal(404, 'not_found', `No message ${id} in ${address}: it expired, was deleted, or never existed there`);
      return reader.wireMessage(message);
    },

    async deleteMessage(address, id) {
      const mailbox = reader.mailboxKey(address, 'address');
      checkId(id);
      spend(ctx.messageBudget, mailbox, 'message');
      return { deleted: store.delete(mailbox, id) };
    },

    async waitForMessage(args: WaitArguments, signal: AbortSignal): Promise<WaitAnswer> {
      const mailbox = reader.mailboxKey(args.address, 'address');
      const sinceId = parseSinceId(blankToUndefined(args.since_id), 'since_id');
      const matches = containsFilter(blankToUndefined(args.from_contains), blankToUndefined(args.subject_contains));
      const release = ctx.slots.tryTake();
      if (!release) {
        throw new Refusal(503, 'too_many_waits',
          `Too many waits are in progress: all ${ctx.slots.capacity} wait slots of this server are taken, and waits are not queued. ` +
          'List the mailbox with list_messages and carry on, or call wait_for_message again in a little while');
      }
      try {
        const outcome = await holdForMail(ctx, { mailbox, sinceId, timeoutMs: args.timeout_seconds * 1000, matches, signal });
        const waited_seconds = Math.round(outcome.waitedMs) / 1000;
        if (outcome.kind === 'failed') throw outcome.error;
        if (outcome.kind === 'aborted') throw new Refusal(503, 'unavailable', 'The wait was cut short: the request was cancelled or the server is closing');
        if (outcome.kind === 'timed_out') return { timed_out: true, waited_seconds };
        // Oldest first: the wait answers with the first message the caller has not seen.
        const message = await reader.wireMessage(outcome.found[0]!);
        return { timed_out: false, waited_seconds, message };
      } finally {
        release();
      }
    },
  };
}
