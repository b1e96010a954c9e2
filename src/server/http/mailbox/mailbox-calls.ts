// The mailbox API's calls (docs/CONTRACT.md): list a mailbox, hold for new
// mail (long-poll.ts), read a message or its source, delete one or the whole
// mailbox. Each spends the address's budget first; refusals come back as
// replies. Which call a request is, is the route table's (../routes.ts); how
// an injected fault spoils the answer, the test hooks' (../test-hooks/).
import type { IncomingMessage } from 'node:http';
import { Refusal } from '../../../contract/refusal.js';
import { PAGING_PARAM } from '../../../contract/routes.js';
import type { WaitSlots } from '../../../contract/wait-slots.js';
import type { Awaitable } from '../../base/awaitable.js';
import type { RequestBudget } from '../../budgets/budget.js';
import type { PageWalks } from '../../budgets/page-walks.js';
import type { CheckThreads } from '../../mail-checks/check-threads.js';
import type { MailStore } from '../../store/mail-store.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import { parseLimit, parseSinceId, singleParam } from '../edge/params.js';
import { json, type Reply } from '../edge/reply.js';
import { checksAsked } from './checks-request.js';
import { longPoll } from './long-poll.js';
import { messageChecks } from './message-checks.js';

/** The mailbox API's calls, as the route table names them and the fault switch counts and matches them. */
export type ApiCall = 'list' | 'wait' | 'message' | 'raw' | 'checks' | 'deleteMessage' | 'deleteMailbox';

/** Which query parameter names the address a call is about. */
export function addressParamOf(call: ApiCall): 'address' | 'mailbox' {
  return call === 'list' || call === 'deleteMailbox' || call === 'wait' ? 'address' : 'mailbox';
}

export interface MailboxCallsContext {
  readonly store: MailStore;
  readonly reader: MailboxReader;
  /** The long-poll's slots; the route table serves `wait` only when they are there. */
  readonly waitSlots: WaitSlots | undefined;
  /** The longest a long-poll is held, in ms (the server's `holdCap`). */
  readonly holdCap: number;
  readonly listBudget: RequestBudget;
  /** Which pages continue a listing, and so are not charged. */
  readonly pageWalks: PageWalks;
  readonly messageBudget: RequestBudget;
  /** Where a message's checks run (a thread of their own, with a deadline). */
  readonly checkThreads: CheckThreads;
  /** What else goes when a mailbox is deleted (the lab's rules and log, the webhooks scoped to it). */
  readonly onMailboxDeleted: (mailbox: string) => Awaitable<void>;
  /** The loopback and private hosts the links check may reach (the server's `linkCheckAllow`). */
  readonly linkCheckAllow: readonly string[];
}

export interface MailboxCall {
  readonly call: ApiCall;
  /** The message id, for the calls on one message. */
  readonly id: string | undefined;
  readonly params: URLSearchParams;
  /** The request, for a call that reads its method and body (the checks). */
  readonly req: IncomingMessage;
  /** Aborted when a held call must end (the caller hung up, the server closes). */
  readonly signal: AbortSignal;
}

export type MailboxCalls = (request: MailboxCall) => Promise<Reply>;

export function createMailboxCalls(ctx: MailboxCallsContext): MailboxCalls {
  /** The `address` / `mailbox` parameter, validated, as a mailbox key. */
  const mailboxParam = (params: URLSearchParams, name: 'address' | 'mailbox') => ctx.reader.mailboxKey(singleParam(params, name), name);

  async function list(params: URLSearchParams): Promise<Reply> {
    const limit = parseLimit(params);
    const beforeId = parseSinceId(singleParam(params, PAGING_PARAM), PAGING_PARAM);
    const mailbox = mailboxParam(params, 'address');
    // A page continuing the latest listing is free (page-walks.ts).
    if (beforeId === undefined || !ctx.pageWalks.isFree(mailbox, beforeId)) await ctx.listBudget.spend(mailbox, 'list');
    // Both asked at once: on a shared store (Redis) they go out together, one round trip where they were two.
    const [messages, evicted] = await Promise.all([ctx.reader.listing(mailbox, limit, beforeId), ctx.reader.evictedField(mailbox)]);
    ctx.pageWalks.served(mailbox, messages);
    // The address is echoed as the caller wrote it (the contract's A); the mailbox itself is case-insensitive.
    return json(200, { address: params.get('address'), messages, ...evicted });
  }

  async function deleteMailbox(params: URLSearchParams): Promise<Reply> {
    const mailbox = mailboxParam(params, 'address');
    await ctx.messageBudget.spend(mailbox, 'message');
    await ctx.onMailboxDeleted(mailbox);
    return json(200, { deleted: await ctx.store.deleteMailbox(mailbox) });
  }

  async function oneMessage({ call, id, params, req, signal }: MailboxCall): Promise<Reply> {
    const asked = call === 'checks' ? await checksAsked(req, params) : undefined;
    const mailbox = mailboxParam(params, 'mailbox');
    await ctx.messageBudget.spend(mailbox, 'message');
    if (call === 'deleteMessage') return json(200, { deleted: await ctx.store.delete(mailbox, id!) });
    const message = await ctx.store.get(mailbox, id!);
    if (!message) {
      throw new Refusal(404, 'not_found', `No message ${id!} in ${mailbox}: it expired, was deleted, or never existed there`);
    }
    if (call === 'raw') {
      return { status: 200, headers: { 'content-type': 'message/rfc822', 'cache-control': 'no-store' }, body: await message.content.source() };
    }
    if (asked) return json(200, await messageChecks(message, asked, ctx.linkCheckAllow, ctx.checkThreads, signal));
    return json(200, await ctx.reader.wireMessage(message));
  }

  return async (request) => {
    const { call, params, signal } = request;
    if (call === 'list') return list(params);
    if (call === 'wait') return json(200, await longPoll({ ...ctx, slots: ctx.waitSlots! }, params, signal));
    if (call === 'deleteMailbox') return deleteMailbox(params);
    return oneMessage(request);
  };
}
