// `GET /api/v1/mailboxes` (an embedded-server extension for the web UI): the
// mailboxes that hold mail, the one whose newest message arrived last first, each with
// its count and newest message's summary. A person's list, not a test's: it
// draws on no per-address budget (it names no address) and is bounded by
// `limit` (1 to 100, default 25); `cursor` (the page before's `next_cursor`)
// pages on. The store answers from an index it keeps (MailStore.mailboxes),
// so a call's work does not grow with the number of mailboxes.
import { MAX_ADDRESS_LENGTH } from '../../../contract/address.js';
import { Refusal } from '../../../contract/refusal.js';
import type { WireMailboxes } from '../../../contract/wire.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import type { MailStore } from '../../store/mail-store.js';
import { parseLimit, parseSinceId, singleParam } from '../edge/params.js';

export async function answerMailboxIndex(params: URLSearchParams, store: MailStore, reader: MailboxReader): Promise<WireMailboxes> {
  const limit = parseLimit(params);
  const contains = singleParam(params, 'contains')?.trim().toLowerCase();
  if (contains !== undefined && contains.length > MAX_ADDRESS_LENGTH) {
    throw new Refusal(
      400,
      'invalid_request',
      `Parameter \`contains\` is at most ${MAX_ADDRESS_LENGTH} characters (an address's length), got ${contains.length}`,
    );
  }
  const cursor = parseSinceId(singleParam(params, 'cursor'), 'cursor');
  const { total, entries, next, partial } = await store.mailboxes({ limit, contains: contains || undefined, cursor });
  const newest = await Promise.all(entries.map((entry) => reader.wireSummary(entry.newest)));
  return {
    total,
    mailboxes: entries.map((entry, i) => ({ address: entry.mailbox, count: entry.count, newest: newest[i]! })),
    ...(next === undefined ? {} : { next_cursor: next }),
    ...(partial ? { partial: true as const } : {}),
  };
}
