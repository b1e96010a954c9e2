// The walk down to the watermark (rule 7) when one listing does not reach
// it: a listing holds at most 100 messages, newest first, so with more mail
// than that above the watermark the oldest - often the very mail a wait
// wants - is below the first page. Where the service pages (`before_id`,
// advertised as `features.paging`), the walk asks for the page older than
// the oldest id it has until a page reaches the watermark or runs short.
// Where it does not, the walk says the listing was cut, so a failure can
// say that older mail may have been missed instead of "not there".
//
// Pacing: the pages follow the first listing at once, in the same turn of
// the address's pacer; the service charges a walk once (a page continuing
// the latest listing within the list window is free, docs/CONTRACT.md).
import type { MailSummary } from '../client/messages.js';
import { reachesWatermark, type Watermark } from './watermark.js';

/** Pages after the first, at most: 5,000 more messages. A watermark further down than that is reported as cut. */
const MAX_PAGES = 50;

/** Where a listing stopped short of the watermark. */
export interface ListingCut {
  /** How many messages the walk listed. */
  readonly listed: number;
  /** True when the service offers paging (the walk was cut off); false when it offers none. */
  readonly paging: boolean;
}

export interface WalkedListing {
  /** Newest first, every page's messages. */
  readonly messages: readonly MailSummary[];
  /** Set when the last page was full and still above the watermark: older mail may be missing. */
  readonly cut: ListingCut | undefined;
}

export interface WalkOptions {
  /** The page size asked for: a shorter page is the bottom of the mailbox. */
  readonly limit: number;
  readonly mark: Watermark | null;
  /** Whether the service pages; asked only when a walk needs a second page. */
  readonly paging: () => Promise<boolean>;
  /** The page older than `beforeId`, newest first. */
  readonly page: (beforeId: string) => Promise<readonly MailSummary[]>;
}

export async function walkToWatermark(first: readonly MailSummary[], { limit, mark, paging, page }: WalkOptions): Promise<WalkedListing> {
  if (first.length < limit || reachesWatermark(first, mark)) return { messages: first, cut: undefined };
  if (!(await paging())) return { messages: first, cut: { listed: first.length, paging: false } };
  const messages = [...first];
  const seen = new Set(first.map((m) => m.id));
  let last = first;
  for (let pages = 0; ; pages++) {
    if (last.length < limit || reachesWatermark(last, mark)) return { messages, cut: undefined };
    if (pages >= MAX_PAGES) return { messages, cut: { listed: messages.length, paging: true } };
    const next = await page(last.at(-1)!.id);
    const older = next.filter((m) => !seen.has(m.id));
    // A service that ignores `before_id` answers the same page again: stop rather than go round.
    if (older.length === 0) return { messages, cut: next.length >= limit ? { listed: messages.length, paging: true } : undefined };
    for (const m of older) seen.add(m.id);
    messages.push(...older);
    last = next;
  }
}
