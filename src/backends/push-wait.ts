// A wait held on a catcher's push stream: the catcher has no long-poll, so
// the hold is made here, from its event stream (push-feed.ts) and its
// listing. It answers as the embedded server's long-poll does (`WaitListing`,
// newest first), so the wait loop's long-poll strategy drives it unchanged:
// the deadline, the watermark walk, the filters and the failure text stay
// where they are.
//
// The stream is subscribed to before the first look, so mail that lands
// between the look and the subscription cannot be missed. The first look is
// made at the address's floor (`lookDelayMs`, rule 4), as the embedded
// server defers its own; after that, the mailbox is listed only when the stream says
// mail arrived (anywhere: the event is not trusted to name the address,
// since a Bcc'd recipient is in no header), and once more when the hold runs
// out - that last look is the check at the end of the budget.
import type { MailboxListing, WaitForMailOptions, WaitListing } from '../client/client.js';
import type { PushFeed } from './push-feed.js';

export type ListForHold = (timeoutMs: number, signal: AbortSignal | undefined) => Promise<MailboxListing>;

/** True when `listing` shows mail newer than `sinceId` (on a random-id catcher: a newest id other than it). */
function hasNewMail(listing: MailboxListing, sinceId: string | undefined): boolean {
  const newest = listing.messages[0];
  return newest !== undefined && newest.id !== sinceId;
}

export async function holdOnFeed(feed: PushFeed, list: ListForHold, options: WaitForMailOptions, requestTimeout: number): Promise<WaitListing> {
  const started = performance.now();
  const until = started + Math.max(0, options.holdMs);
  const hardStop = started + (options.timeout ?? options.holdMs + requestTimeout);
  const { signal } = options;
  const timeLeft = () => Math.max(1, Math.min(requestTimeout, hardStop - performance.now()));
  const release = feed.use();
  try {
    await feed.ready(Math.min(requestTimeout, timeLeft()), signal);
    const mark = feed.mark();
    if ((options.lookDelayMs ?? 0) > 0) await delay(Math.min(options.lookDelayMs!, Math.max(0, until - performance.now())), signal);
    return await holdOn(feed, list, options, until, timeLeft, mark);
  } finally {
    release();
  }
}

async function holdOn(
  feed: PushFeed,
  list: ListForHold,
  options: WaitForMailOptions,
  until: number,
  timeLeft: () => number,
  firstMark: number,
): Promise<WaitListing> {
  const { signal } = options;
  let mark = firstMark;
  for (;;) {
    const listing = await list(timeLeft(), signal);
    if (hasNewMail(listing, options.sinceId)) return { ...listing, timedOut: false };
    const left = until - performance.now();
    if (left <= 0) return { ...listing, timedOut: true };
    const woke = await feed.waitForMail(mark, left, signal);
    mark = feed.mark();
    if (!woke) {
      // The hold ran out: one more look is the check at its end.
      const last = await list(timeLeft(), signal);
      return { ...last, timedOut: !hasNewMail(last, options.sinceId) };
    }
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    signal?.throwIfAborted();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
