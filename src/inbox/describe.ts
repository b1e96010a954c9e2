// Sentences about mail and waits, for failure messages and reports: both
// runner adapters use these, so a wait reads the same in Playwright and in Vitest.
import { compileFilter, type MailFilter } from './filter.js';
import type { MailSummary } from '../client/messages.js';
import { formatDuration } from '../contract/format.js';

export type WaitKind = 'expectMail' | 'expectMails' | 'expectNoMail';

export interface DescribeWaitOptions {
  readonly kind?: WaitKind | undefined;
  /** How many mails `expectMails` wants. */
  readonly count?: number | undefined;
  /** The quiet period of `expectNoMail`, in ms. */
  readonly within?: number | undefined;
}

/**
 * `Wait for mail to a@mailroom.test with subject ~ "Confirm"`,
 * `Wait for 2 mails to a@mailroom.test`,
 * `Expect no mail to a@mailroom.test with subject ~ "Error" for 2 s`.
 */
export function describeWait(address: string, filter?: MailFilter | string, options: DescribeWaitOptions = {}): string {
  const description = typeof filter === 'string' ? filter : compileFilter(filter).description;
  const withFilter = description === 'any mail' ? '' : ` with ${description}`;
  const kind = options.kind ?? (options.count !== undefined && options.count !== 1 ? 'expectMails' : 'expectMail');
  if (kind === 'expectNoMail') {
    const within = options.within === undefined ? '' : ` for ${formatDuration(options.within)}`;
    return `Expect no mail to ${address}${withFilter}${within}`;
  }
  const count = options.count ?? 1;
  return count === 1 ? `Wait for mail to ${address}${withFilter}` : `Wait for ${count} mails to ${address}${withFilter}`;
}

const MAX_QUOTED = 80;

/** `"Subject"`, with quotes and control characters escaped, long text cut. */
export function quote(text: string): string {
  const cut = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED - 1)}…` : text;
  return JSON.stringify(cut);
}

/** `12:00:01 UTC`: the time of day in UTC, which is what CI logs print, with the zone so no reader takes it for theirs. */
export function formatTime(date: Date): string {
  return Number.isNaN(date.getTime()) ? 'an unknown time' : `${date.toISOString().slice(11, 19)} UTC`;
}

/** `"Welcome to Acme" from hello@acme.example at 12:00:01 UTC` */
export function formatSummary(summary: Pick<MailSummary, 'subject' | 'from' | 'receivedAt'>): string {
  const from = summary.from.trim() === '' ? 'an unknown sender' : summary.from;
  return `${quote(summary.subject)} from ${from} at ${formatTime(summary.receivedAt)}`;
}

/** A list of summaries for a failure message, the first `max` of them. */
export function formatSummaries(summaries: readonly Pick<MailSummary, 'subject' | 'from' | 'receivedAt'>[], max = 10): string {
  const shown = summaries.slice(0, max).map(formatSummary).join(', ');
  const more = summaries.length - max;
  return more > 0 ? `${shown} and ${more} more` : shown;
}
