// The claim-and-fetch engine of `expectMail` and `expectMails`: what a wait
// does with each listing it gets (rules 7 and 8 of docs/CONTRACT.md, "The
// client's nine rules"). It walks down to the watermark, matches on the
// summary, and fetches only the matches, oldest first, so successive waits
// get mail in arrival order - unless the oldest cannot be fetched: then a
// later match is returned rather than none. While it fetches a match, the
// match is claimed, so a concurrent wait on the same inbox passes over it.
//
// It also keeps what a failure has to say: the mail it saw and rejected,
// the matches it could not fetch in time, and the mail it passed over and why.
import { MailroomApiError, isTransient } from '../client/errors.js';
import type { MailSummary } from '../client/messages.js';
import type { InspectContext, PollOutcome } from '../wait/strategy.js';
import type { CompiledFilter } from './filter.js';
import type { InboxLedger } from './ledger.js';
import type { ListingCut } from './listing-walk.js';
import type { Mail } from './mail.js';
import type { SkippedMail, SkipReason, WaitFailure } from './wait-errors.js';

export interface CollectRequest {
  readonly address: string;
  /** How many matching mails the wait wants. */
  readonly count: number;
  readonly filter: CompiledFilter;
  readonly ledger: InboxLedger;
  /** The summaries above the inbox's watermark, newest first. */
  readonly aboveWatermark: (messages: readonly MailSummary[]) => MailSummary[];
  /** Fetches one match; `hardStop` is when the fetch must be done. Throws the client's typed errors. */
  readonly fetch: (summary: MailSummary, hardStop: number) => Promise<Mail>;
  /** Where the latest listing stopped short of the watermark, if it did. */
  readonly listingCut?: (() => ListingCut | undefined) | undefined;
  readonly signal: AbortSignal | undefined;
}

export class Collection {
  readonly #request: CollectRequest;
  readonly #taken: Mail[] = [];
  /** Claimed by this wait, released when it ends. */
  readonly #mine = new Set<string>();
  readonly #rejected = new Map<string, MailSummary>();
  readonly #unfetched = new Map<string, MailSummary>();
  readonly #skipped = new Map<string, SkippedMail>();
  /** Listed mail a concurrent wait had claimed when this one looked: not done with yet. */
  readonly #claimedByOthers = new Set<string>();
  #fetchError: Error | undefined;

  constructor(request: CollectRequest) {
    this.#request = request;
  }

  /** Looks at one listing; returns the wanted mails once it has them all. */
  readonly inspect = async (messages: readonly MailSummary[], { hardStop, incomplete }: InspectContext): Promise<Mail[] | undefined> => {
    const { count, filter, ledger, signal } = this.#request;
    const candidates: MailSummary[] = [];
    this.#claimedByOthers.clear();
    for (const summary of this.#request.aboveWatermark(messages)) {
      if (this.#mine.has(summary.id)) continue;
      const reason = ledger.skipReason(summary.id);
      if (reason !== undefined) {
        this.#skip(summary, reason);
        continue;
      }
      this.#skipped.delete(summary.id);
      if (filter.matches(summary)) candidates.push(summary);
      else this.#rejected.set(summary.id, summary);
    }
    for (const summary of candidates.reverse()) {
      if (this.#taken.length >= count) break;
      const reason = ledger.skipReason(summary.id);
      if (reason !== undefined) {
        this.#skip(summary, reason); // claimed by a concurrent wait meanwhile
        continue;
      }
      ledger.claim(summary.id);
      this.#mine.add(summary.id);
      try {
        this.#taken.push(await this.#request.fetch(summary, hardStop));
        this.#unfetched.delete(summary.id);
      } catch (error) {
        ledger.release(summary.id);
        this.#mine.delete(summary.id);
        if (signal?.aborted) return undefined;
        if (error instanceof MailroomApiError && error.status === 404) {
          ledger.markGone(summary.id); // deleted or expired since the listing
          this.#skip(summary, 'gone');
          continue;
        }
        if (!isTransient(error)) throw error;
        this.#fetchError = error as Error;
        // The next check tries it again; meanwhile a later match may do.
        this.#unfetched.set(summary.id, summary);
        incomplete();
      }
    }
    if (this.#taken.length >= count) return this.#taken;
    // Mail a concurrent wait holds may yet be let go of: the next look must
    // list it again, and a release brings that look forward (`watch`).
    if (this.#claimedByOthers.size > 0) incomplete();
    return undefined;
  };

  /**
   * Calls `wake` when a concurrent wait ends its claim on mail this one
   * passed over as claimed (returned it, or let go of it): the last listing
   * is then worth a look again at once. Returns the unsubscribe function.
   */
  readonly watch = (wake: () => void): (() => void) =>
    this.#request.ledger.watchClaims((id) => {
      if (this.#claimedByOthers.has(id)) wake();
    });

  /** What a wait that ran out of budget (or was cut short) knew, from what this collection saw: a `MailTimeoutError`'s fields. */
  failure(outcome: PollOutcome<unknown>, budgetMs: number, elapsedMs: number, evicted?: WaitFailure['evicted']): WaitFailure {
    return {
      address: this.#request.address,
      filter: this.#request.filter.description,
      budgetMs,
      elapsedMs,
      checks: outcome.checks,
      failedChecks: outcome.failedChecks,
      refusals: outcome.refusals,
      rejected: [...this.#rejected.values()].sort(byArrival),
      unfetched: [...this.#unfetched.values()].sort(byArrival),
      skipped: [...this.#skipped.values()].sort((a, b) => byArrival(a.summary, b.summary)),
      wanted: this.#request.count,
      received: this.#taken.length,
      lastError: outcome.lastError ?? this.#fetchError,
      cutShort: outcome.cutShort,
      cutShortReason: outcome.cutShortReason,
      listingCut: this.#request.listingCut?.(),
      evicted,
    };
  }

  /** Frees this wait's claims, whatever it ended with. */
  release(): void {
    for (const id of this.#mine) this.#request.ledger.release(id);
  }

  // Mail above the watermark passed over without a look at its subject: a
  // failure names it and why, so it never says "nothing arrived" (rule 9).
  #skip(summary: MailSummary, reason: SkipReason): void {
    if (reason === 'claimed') this.#claimedByOthers.add(summary.id);
    this.#unfetched.delete(summary.id);
    this.#skipped.set(summary.id, { summary, reason });
  }
}

function byArrival(a: MailSummary, b: MailSummary): number {
  return a.receivedAt.getTime() - b.receivedAt.getTime();
}
