// What the list call says about one message, and how it reads in a sentence.

/** One entry of a mailbox listing: enough to filter on, not the body. */
export interface MailSummary {
  /** The service's id: scoped to one mailbox, gone when the message is. */
  readonly id: string;
  readonly from: string;
  /** The To header's addresses (a Bcc'd copy lands without being listed). */
  readonly to: readonly string[];
  readonly subject: string;
  /** A short text excerpt, NOT the body: fetch the message to read it. */
  readonly preview: string;
  readonly receivedAt: Date;
  readonly size: number;
}

const MAX_QUOTED = 80;

/** `"Subject"`, with quotes and control characters escaped, long text cut. */
export function quote(text: string): string {
  const cut = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED - 1)}…` : text;
  return JSON.stringify(cut);
}

/** `12:00:01`: the UTC time of day, which is what CI logs print. */
export function formatTime(date: Date): string {
  return Number.isNaN(date.getTime()) ? 'an unknown time' : date.toISOString().slice(11, 19);
}

/** `"Welcome to Acme" from hello@acme.example at 12:00:01` */
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

/** `30 s`, `1.5 s`, `250 ms`: budgets as people write them. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${Number.isInteger(seconds) ? seconds.toFixed(0) : seconds.toFixed(1)} s`;
}
