// Why nothing arrived: what the backend's own records say, read once a wait
// has failed with nothing at all above its watermark.
//
// "Nothing arrived at all" is true but leaves the reader guessing: did the
// app not send, send to another address, or was its mail refused? The
// embedded server logs every SMTP attempt and provider API call that named
// an address (the deferral lab's log) and keeps an index of the mailboxes
// holding mail, so a failed wait can tell: no attempt came; attempts came
// and were refused, with the reply and the rule that gave it; or the server
// took mail for other addresses of the domain meanwhile (a typo, or the app
// sent it elsewhere). A backend that keeps no log (maildev, Mailpit, a
// server without the lab) is named as such. Nothing is read on the happy
// path, and the reading has a small budget of its own: a failure is never
// held up much by its explanation, and says so when the log could not be read.
import type { MailBackend } from '../backends/backend.js';
import { MailroomError } from '../client/errors.js';
import type { MailboxIndexEntry } from '../client/messages.js';
import type { SmtpAttempt } from '../client/smtp-lab.js';
import { formatDuration, offset, plural } from '../contract/format.js';
import { formatTime, quote } from './describe.js';
import type { CompiledFilter } from './filter.js';

/** The most a failed wait spends reading why nothing arrived. */
export const SILENCE_BUDGET_MS = 1_000;
/** The other addresses named, at most. */
const SHOWN_ELSEWHERE = 3;
/** How many of the domain's latest mailboxes are looked at. */
const INDEX_LIMIT = 25;
/**
 * The server's clock and this process's may differ a little (a service on
 * another machine): records this much older than the inbox still count.
 */
const CLOCK_SLACK_MS = 1_000;

export interface SilenceQuestion {
  readonly backend: MailBackend;
  readonly address: string;
  /** When the inbox was made (wall time): records before it are not this test's. */
  readonly since: Date;
  readonly filter: CompiledFilter;
  /** How long the reading may take, in ms (at most `SILENCE_BUDGET_MS`). */
  readonly budgetMs: number;
}

/**
 * One or two sentences on why nothing arrived at `address`, to follow
 * "Nothing arrived at all." in a failure. Never throws: a log that cannot be
 * read is said to be so.
 */
export async function explainSilence(question: SilenceQuestion): Promise<string> {
  const { backend, address, budgetMs } = question;
  const timeout = Math.max(1, Math.round(budgetMs));
  // One clock for both calls and whatever each asks first (the service's features).
  const call = { timeout, signal: AbortSignal.timeout(timeout) };
  const domain = address.slice(address.lastIndexOf('@'));
  const [log, index] = await Promise.allSettled([
    // Asked even when the features, read earlier, named no log: they say "none" on trouble too, and the
    // client asks again before it answers `unsupported`.
    backend.smtpAttempts(address, call),
    backend.mailboxes?.({ ...call, contains: domain, limit: INDEX_LIMIT }),
  ]);
  if (log.status === 'rejected') {
    if (log.reason instanceof MailroomError && log.reason.slug === 'unsupported') return noLog(backend);
    return unread(call.signal.aborted ? `no answer within ${formatDuration(timeout)}` : log.reason);
  }
  const from = question.since.getTime() - CLOCK_SLACK_MS;
  const attempts = log.value.filter((a) => a.at.getTime() >= from);
  if (attempts.length > 0) return attemptsStory(attempts, question.since);
  const none = `No SMTP attempt or provider API call named this address since the inbox was made at ${formatTime(question.since)} (the server's attempt log).`;
  // No index (a service without one), or none in time: the first sentence stands alone.
  if (index.status === 'rejected' || index.value === undefined) return none;
  const elsewhere = index.value.mailboxes.filter((m) => m.address.toLowerCase() !== address.toLowerCase() && m.newest.receivedAt.getTime() >= from);
  return `${none} ${elsewhereStory(elsewhere, question, index.value.mailboxes.length === INDEX_LIMIT)}`;
}

/**
 * What the attempts at the address came to, when none left mail in the
 * mailbox: `The server's attempt log has 2 attempts at this address since
 * the inbox was made at 12:00:01: refused with 550 5.1.1 by the reject rule
 * at +0.104 s, +1.180 s.`
 */
function attemptsStory(attempts: readonly SmtpAttempt[], since: Date): string {
  const groups = new Map<string, SmtpAttempt[]>();
  for (const attempt of attempts) {
    const key = what(attempt);
    groups.set(key, [...(groups.get(key) ?? []), attempt]);
  }
  const parts = [...groups].map(([key, these]) => `${key} at ${these.map((a) => after(since, a.at)).join(', ')}`);
  return `The server's attempt log has ${plural(attempts.length, 'attempt')} at this address since the inbox was made at ${formatTime(since)}: ${parts.join('; ')}.`;
}

/**
 * `refused with 550 5.1.1 by the reject rule`, `deferred with 429 (resend
 * API) by the rate_limit rule`, `dropped without a reply by the disconnect
 * rule`, `accepted, but its mail is no longer in the mailbox (deleted, or expired)`.
 */
function what(attempt: SmtpAttempt): string {
  if (attempt.outcome === 'accepted') return 'accepted, but its mail is no longer in the mailbox (deleted, or expired),';
  const via = attempt.stage === 'api' && attempt.provider ? ` (${attempt.provider} API)` : '';
  const reply =
    attempt.code === null
      ? `${attempt.outcome === 'dropped' ? 'dropped' : attempt.outcome} without a reply`
      : `${attempt.outcome === 'rejected' ? 'refused' : attempt.outcome} with ${attempt.code}${attempt.enhancedCode ? ` ${attempt.enhancedCode}` : ''}${via}`;
  const by = attempt.rule ? ` by the ${attempt.rule} rule` : attempt.code === null ? '' : ' by the server itself';
  return `${reply}${by}`;
}

/** Mail the server took for other addresses of the domain since the inbox was made, the likeliest first. */
function elsewhereStory(entries: readonly MailboxIndexEntry[], { address, filter, since }: SilenceQuestion, more: boolean): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  if (entries.length === 0) return `Nor did the server take mail for any other address at ${domain} meanwhile.`;
  // Mail that matches the wait's filter is the likeliest to be the one it wanted; then the latest.
  const ranked = [...entries].sort((a, b) => Number(filter.matches(b.newest)) - Number(filter.matches(a.newest)));
  const shown = ranked
    .slice(0, SHOWN_ELSEWHERE)
    .map((m) => `${quote(m.newest.subject)} to ${m.address} at ${after(since, m.newest.receivedAt)}`)
    .join(', ');
  const n = entries.length;
  const howMany = `${n}${more ? ' or more' : ''} other ${n === 1 && !more ? 'address' : 'addresses'}`;
  const rest = n > SHOWN_ELSEWHERE ? `, among them ${shown}` : `: ${shown}`;
  return `Meanwhile the server took mail for ${howMany} at ${domain}${rest} (a typo in the address, or the app sent it elsewhere).`;
}

function noLog(backend: MailBackend): string {
  const who = backend.backend === 'mailroom' ? `The server at ${backend.apiURL}` : `${backend.backend} at ${backend.apiURL}`;
  return `${who} keeps no log of SMTP attempts, so it cannot say whether the app tried to send here: look in the app's own log for what it sent, and to whom.`;
}

function unread(error: unknown): string {
  const why = error instanceof Error ? error.message : String(error);
  return `Why is unknown: the server's attempt log could not be read in time (${why.replace(/\.$/, '')}).`;
}

/** `+0.104 s`: how long after the inbox was made (never below zero: the clocks may differ a little). */
function after(since: Date, at: Date): string {
  return offset(Math.max(0, at.getTime() - since.getTime()));
}
