// `GET /api/v1/mailbox/wait`: the long-poll a client uses instead of sleeping
// between list calls. Held until a message newer than `since_id` (and matching
// the optional server-side filters) is in the mailbox, at most 25 s, and then
// answered with the mailbox's listing at that moment - the very answer a
// `GET /mailbox` would have given - plus `timed_out` and `waited_seconds`.
//
// Answering with the whole listing, not only the matches, keeps every
// guarantee of the client's loop in the client: it walks the list newest
// first and stops at its watermark as usual, and filters the server cannot
// evaluate (a RegExp, a predicate) still work - such a client sends no
// server-side filter, so any new message wakes it, and it filters itself.
import { MAX_WAIT_SECONDS } from '../../../contract/limits.js';
import { API_BASE } from '../../../contract/routes.js';
import { Refusal } from '../../../contract/refusal.js';
import { blankToUndefined } from '../../../contract/validation.js';
import type { WaitSlots } from '../../../contract/wait-slots.js';
import type { WireWaitAnswer } from '../../../contract/wire.js';
import type { PageWalks } from '../../budgets/page-walks.js';
import { containsFilter, holdForMail, type WaitContext } from '../../waits/hold-for-mail.js';
import { parseLimit, parseSinceId, singleParam } from '../edge/params.js';

/**
 * `timeout` in seconds (fractions allowed; default and maximum `capSeconds`,
 * the contract's 25 unless the server was started with a shorter `holdCap`;
 * larger values are clamped).
 */
export function parseWaitTimeout(value: string | undefined, capSeconds = MAX_WAIT_SECONDS): number {
  if (value === undefined) return capSeconds;
  const seconds = /^[0-9]{1,9}(?:\.[0-9]{1,3})?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(seconds)) {
    throw new Refusal(
      400,
      'invalid_request',
      `Parameter \`timeout\` must be a number of seconds from 0 to ${MAX_WAIT_SECONDS} (e.g. 25 or 2.5), got ${JSON.stringify(value)}`,
    );
  }
  return Math.min(seconds, capSeconds);
}

export async function longPoll(
  ctx: WaitContext & { readonly slots: WaitSlots; readonly holdCap: number; readonly pageWalks: PageWalks },
  params: URLSearchParams,
  signal: AbortSignal,
): Promise<WireWaitAnswer> {
  const limit = parseLimit(params);
  const sinceId = parseSinceId(singleParam(params, 'since_id'), 'since_id');
  const timeoutSeconds = parseWaitTimeout(singleParam(params, 'timeout'), ctx.holdCap / 1000);
  const matches = containsFilter(blankToUndefined(singleParam(params, 'from_contains')), blankToUndefined(singleParam(params, 'subject_contains')));
  const address = singleParam(params, 'address');
  const mailbox = ctx.reader.mailboxKey(address, 'address');

  const release = ctx.slots.take(`List the mailbox instead (GET ${API_BASE}/mailbox?address=${address}), or try again later`);
  try {
    const outcome = await holdForMail(ctx, { mailbox, sinceId, timeoutMs: timeoutSeconds * 1000, matches, signal });
    if (outcome.kind === 'failed') throw outcome.error;
    if (outcome.kind === 'aborted') throw new Refusal(503, 'unavailable', 'The wait was cut short: the server is closing');
    const messages = await ctx.reader.listing(mailbox, limit);
    // The answer is a listing like a list call's: pages below it are free.
    ctx.pageWalks.served(mailbox, messages);
    return {
      address: address!,
      messages,
      timed_out: outcome.kind === 'timed_out',
      waited_seconds: Math.round(outcome.waitedMs) / 1000,
      ...(await ctx.reader.evictedField(mailbox)),
    };
  } finally {
    release();
  }
}
