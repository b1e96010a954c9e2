// The MCP tools on the embedded server: the store read directly, with the same
// refusals and budgets as the HTTP API (store/mailbox-reader.ts), and
// `wait_for_message` held by `holdForMail` in one of the server's MCP wait slots.
// The SMTP deferral lab's tools, when the lab is on, are the HTTP API's own
// calls (rules/lab-calls.ts): the same parser, lab and budget.
import { DEFAULT_LIST_LIMIT, MCP_WHEN_SLOTS_ARE_FULL } from '../../../contract/limits.js';
import { Refusal } from '../../../contract/refusal.js';
import { blankToUndefined } from '../../../contract/validation.js';
import type { WaitSlots } from '../../../contract/wait-slots.js';
import type { MailTools, WaitArguments, WaitAnswer } from '../../../mcp/tools.js';
import type { RequestBudget } from '../../budgets/budget.js';
import { parseSinceId } from '../edge/params.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import type { LabCalls } from '../../rules/lab-calls.js';
import { isWellFormedId } from '../../store/ids.js';
import type { MailStore } from '../../store/mail-store.js';
import { containsFilter, holdForMail } from '../../waits/hold-for-mail.js';

export interface EmbeddedToolsContext {
  readonly store: MailStore;
  readonly reader: MailboxReader;
  readonly listBudget: RequestBudget;
  readonly messageBudget: RequestBudget;
  readonly slots: WaitSlots;
  /** The served domains, fresh addresses made on the first; with `catchAll`, every domain's mail is taken. */
  readonly domains: readonly string[];
  readonly catchAll: boolean;
  /** The longest a wait is held, in ms (the server's `holdCap`). */
  readonly holdCap: number;
  /** The SMTP deferral lab's calls; undefined when the lab is off (its tools are then not offered). */
  readonly smtpLab?: LabCalls | undefined;
}

function checkId(id: string): void {
  if (!isWellFormedId(id)) {
    throw new Refusal(
      400,
      'invalid_request',
      `Malformed message id ${JSON.stringify(id)}: an id is 11 characters of 0-9 and a-z, as list_messages returns them`,
    );
  }
}

export function createEmbeddedTools(ctx: EmbeddedToolsContext): MailTools {
  const { store, reader, smtpLab } = ctx;
  /** One message of `address`, its read paid from the message budget, as `get_message` and `get_attachment` read it. */
  const storedMessage = async (address: string, id: string) => {
    const mailbox = reader.mailboxKey(address, 'address');
    checkId(id);
    await ctx.messageBudget.spend(mailbox, 'message');
    const message = await store.get(mailbox, id);
    if (!message) throw new Refusal(404, 'not_found', `No message ${id} in ${address}: it expired, was deleted, or never existed there`);
    return message;
  };
  return {
    maxWaitSeconds: ctx.holdCap / 1000,
    smtpLab: smtpLab && {
      addRule: (address, rule) => smtpLab.addRule(address, rule),
      rules: (address) => smtpLab.rules(address),
      clearRules: (address) => smtpLab.clearRules(address),
      attempts: (address) => smtpLab.attempts(address),
    },
    async listMessages(address, limit) {
      const mailbox = reader.mailboxKey(address, 'address');
      await ctx.listBudget.spend(mailbox, 'list');
      return { address, messages: await reader.listing(mailbox, limit ?? DEFAULT_LIST_LIMIT) };
    },

    async getMessage(address, id) {
      return reader.wireMessage(await storedMessage(address, id));
    },

    addressDomains: () => Promise.resolve({ domains: ctx.domains, anyDomain: ctx.catchAll }),

    // Read from the store without spending a list call: the agent's next
    // call is the wait, and it must not find the budget already spent.
    async newestId(address) {
      const [newest] = await reader.listing(reader.mailboxKey(address, 'address'), 1);
      return newest?.id ?? null;
    },

    async rawMessage(address, id) {
      return (await storedMessage(address, id)).content.source();
    },

    async deleteMessage(address, id) {
      const mailbox = reader.mailboxKey(address, 'address');
      checkId(id);
      await ctx.messageBudget.spend(mailbox, 'message');
      return { deleted: await store.delete(mailbox, id) };
    },

    async waitForMessage(args: WaitArguments, signal: AbortSignal): Promise<WaitAnswer> {
      const mailbox = reader.mailboxKey(args.address, 'address');
      const sinceId = parseSinceId(blankToUndefined(args.since_id), 'since_id');
      const matches = containsFilter(blankToUndefined(args.from_contains), blankToUndefined(args.subject_contains));
      const release = ctx.slots.take(MCP_WHEN_SLOTS_ARE_FULL);
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
