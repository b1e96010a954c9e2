// The errors of a wait that gives up. Each says what the wait looked for,
// for how long, how many times it looked, and what it saw instead and why it
// passed it over (rule 9 of docs/CONTRACT.md, "The client's nine rules").
import type { MailSummary } from '../client/messages.js';
import { MailroomError } from '../client/errors.js';
import { formatSummaries, formatSummary } from './describe.js';
import { formatDuration } from '../contract/format.js';
import type { ListingCut } from './listing-walk.js';

/**
 * Why a wait passed over mail above the watermark without looking at its
 * subject: an earlier wait on this inbox returned it, a concurrent wait on
 * this inbox took it first, the `handled` store has it, or it was deleted
 * or expired between the listing and the fetch.
 */
export type SkipReason = 'returned' | 'claimed' | 'handled' | 'gone';

/** Mail a wait saw above the watermark and passed over, and why. */
export interface SkippedMail {
  readonly summary: MailSummary;
  readonly reason: SkipReason;
}

/** How each reason reads in a failure message, in the order they are listed. */
export const SKIP_REASONS: Readonly<Record<SkipReason, string>> = Object.freeze({
  returned: 'Already returned by an earlier wait',
  claimed: 'Taken by a concurrent wait on this inbox',
  handled: 'Already handled (the handled store has it)',
  gone: 'Deleted or expired before it could be fetched',
});

/** What a wait knew when it gave up; the fields of `MailTimeoutError`. */
export interface WaitFailure {
  readonly address: string;
  /** The filter in words, e.g. `subject ~ "Invoice"`; `any mail` when empty. */
  readonly filter: string;
  readonly budgetMs: number;
  readonly elapsedMs: number;
  /** List calls the service answered with a mailbox. */
  readonly checks: number;
  /** List calls that failed transiently (5xx, network, timeout). */
  readonly failedChecks: number;
  /** List calls refused with 429 (not counted as checks). */
  readonly refusals: number;
  /** Mail above the watermark that this wait saw and did not want, oldest first. */
  readonly rejected: readonly MailSummary[];
  /** How many matching mails the wait wanted and how many it got. */
  readonly wanted: number;
  readonly received: number;
  /** Matching mail that was listed but could not be fetched in time. */
  readonly unfetched: readonly MailSummary[];
  /**
   * Mail above the watermark the wait passed over without matching it
   * (returned earlier, taken by a concurrent wait, handled, gone), oldest
   * first. Omitted means none.
   */
  readonly skipped?: readonly SkippedMail[] | undefined;
  /** Mail above the watermark that the service's message cap evicted before the wait could read it. */
  readonly evicted?: { readonly count: number; readonly newestId: string } | undefined;
  /** The most recent transient failure, if any check or fetch failed. */
  readonly lastError: Error | undefined;
  /** Set when an AbortSignal ended the wait before its budget did. */
  readonly cutShort: boolean;
  readonly cutShortReason: string | undefined;
  /**
   * Set when the last listing stopped short of the watermark: full, and the
   * service offers no paging (or the walk down its pages was cut off), so
   * older mail above the watermark may have been missed.
   */
  readonly listingCut?: ListingCut | undefined;
  /**
   * Why nothing arrived, in a sentence or two, from what the backend keeps:
   * the embedded server's attempt log for the address (no attempt came, or
   * each was refused, with its reply and rule) and its mailbox index (mail
   * taken for other addresses of the domain meanwhile); or that the backend
   * keeps no log. Read only when nothing arrived (`nothingArrived`).
   */
  readonly diagnosis?: string | undefined;
}

/** A wait for mail ran out of budget (or was cut short) without the mail. */
// The class carries every field of `WaitFailure` (declaration merging keeps
// the list in one place).
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface MailTimeoutError extends Omit<WaitFailure, 'address' | 'skipped'> {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class MailTimeoutError extends MailroomError {
  override name = 'MailTimeoutError';
  declare readonly address: string;
  /** Mail above the watermark the wait passed over, and why (empty when none). */
  declare readonly skipped: readonly SkippedMail[];

  constructor(failure: WaitFailure) {
    super(formatWaitFailure(failure), { slug: 'mail_timeout', address: failure.address, cause: failure.lastError });
    Object.assign(this, failure, {
      rejected: Object.freeze([...failure.rejected]),
      unfetched: Object.freeze([...failure.unfetched]),
      skipped: Object.freeze((failure.skipped ?? []).map((s) => Object.freeze({ summary: s.summary, reason: s.reason }))),
    });
  }
}

/**
 * `No mail matching subject ~ "Invoice" arrived at a@b within 30 s (14
 * checks). Seen and rejected: "Welcome" from x at 12:00:01 UTC, …`
 */
export function formatWaitFailure(f: WaitFailure): string {
  const matching = f.filter === 'any mail' ? '' : ` matching ${f.filter}`;
  const what = f.wanted <= 1 ? `No mail${matching} arrived` : `Only ${f.received} of ${f.wanted} mails${matching} arrived`;
  const within = f.cutShort
    ? `within ${formatDuration(f.elapsedMs)}, when the wait was cut short of its ${formatDuration(f.budgetMs)} budget${f.cutShortReason ? ` (${f.cutShortReason})` : ''}`
    : `within ${formatDuration(f.budgetMs)}`;

  const counts = [`${f.checks} ${f.checks === 1 ? 'check' : 'checks'}`];
  if (f.failedChecks > 0) counts.push(`${f.failedChecks} failed`);
  if (f.refusals > 0) counts.push(`${f.refusals} refused with 429`);

  let text = `${what} at ${f.address} ${within} (${counts.join(', ')}).`;
  const skipped = f.skipped ?? [];
  if (f.rejected.length > 0) {
    text += ` Seen and rejected: ${formatSummaries(f.rejected)}.`;
  }
  for (const reason of Object.keys(SKIP_REASONS) as SkipReason[]) {
    const these = skipped.filter((s) => s.reason === reason).map((s) => s.summary);
    if (these.length > 0) text += ` ${SKIP_REASONS[reason]}: ${formatSummaries(these)}.`;
  }
  // Only when nothing at all was above the watermark: mail passed over for
  // a reason, or matching mail that could not be fetched, did arrive.
  if (f.evicted) {
    const n = f.evicted.count;
    text += ` The server evicted ${n === 1 ? '1 message' : `${n} messages`} for this address (the newest ${f.evicted.newestId}) to stay under its message cap before the wait could read ${n === 1 ? 'it' : 'them'}: raise the server's maxMessages (mailroom serve --max-messages).`;
  } else if (nothingArrived(f)) {
    text += ' Nothing arrived at all.';
    if (f.diagnosis) text += ` ${f.diagnosis}`;
  }
  if (f.unfetched.length > 0) {
    text += ` Matching mail did arrive but could not be fetched in time: ${formatSummaries(f.unfetched, 5)}.`;
  }
  if (f.listingCut) {
    text += f.listingCut.paging
      ? ` The listing stopped at ${f.listingCut.listed} messages, still above the watermark (the walk down its pages was cut off): older mail may have been missed.`
      : ` The listing was full (${f.listingCut.listed} messages, the most the service lists at once) without reaching the watermark, and the service offers no paging: older mail may have been missed.`;
  }
  if (f.lastError) {
    text += f.checks === 0 ? ` No check got an answer; the last failure: ${f.lastError.message}` : ` The last failed check: ${f.lastError.message}`;
  } else if (f.checks === 0 && f.cutShort) {
    // The cut caught the first look in flight: nothing failed, but nothing was seen either.
    text += ' No check got an answer before the cut (the first was still in flight), so whether mail arrived is unknown.';
  }
  return text;
}

/**
 * True when a wait saw nothing at all above the watermark: no mail it
 * rejected, passed over or could not fetch, none evicted, and at least one
 * check answered (so "nothing" is known, not guessed).
 */
export function nothingArrived(f: Omit<WaitFailure, 'diagnosis'>): boolean {
  return f.evicted === undefined && f.checks > 0 && f.received === 0 && f.rejected.length === 0 && (f.skipped ?? []).length === 0 && f.unfetched.length === 0;
}

export interface UnexpectedMailDetails {
  readonly address: string;
  readonly filter: string;
  readonly withinMs: number;
  readonly elapsedMs: number;
  /** The matching mail that arrived, oldest first. */
  readonly arrived: readonly MailSummary[];
}

/** `expectNoMail` saw matching mail during its quiet period. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export interface UnexpectedMailError extends Omit<UnexpectedMailDetails, 'address'> {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class UnexpectedMailError extends MailroomError {
  override name = 'UnexpectedMailError';
  declare readonly address: string;

  constructor(details: UnexpectedMailDetails) {
    const matching = details.filter === 'any mail' ? '' : ` matching ${details.filter}`;
    const [first, ...others] = details.arrived;
    const seen = first ? formatSummary(first) : 'a message';
    const more = others.length > 0 ? `, and ${others.length === 1 ? 'also' : `${others.length} more:`} ${formatSummaries(others, 5)}` : '';
    super(
      `Expected no mail${matching} at ${details.address} for ${formatDuration(details.withinMs)}, but ${seen} arrived${more} (seen after ${formatDuration(details.elapsedMs)}).`,
      { slug: 'unexpected_mail', address: details.address },
    );
    Object.assign(this, details, { arrived: Object.freeze([...details.arrived]) });
  }
}
