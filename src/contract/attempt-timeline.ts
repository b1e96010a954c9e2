// The attempt timeline, as a failure message, the report and the MCP tool
// `list_smtp_attempts` print it: one line per attempt, its time from the
// first, its mail and try, the stage, the reply, the outcome, the rule, and
// how long the sender waited before a retry.
//
//   SMTP attempts at signup-…@mailroom.test: 2 mails, 3 attempts, times from the first (16:49:08.123 UTC):
//     +0.000 s  mail 1, try 1  RCPT  451 4.7.1  deferred  (greylist)
//     +1.204 s  mail 1, try 2  DATA  250 2.6.0  accepted  waited 1.2 s  "Confirm your email"
//     +1.210 s  mail 2, try 1  DATA  250 2.6.0  accepted  "Welcome to Acme"
//
// A provider API call (stage `api`) shows its HTTP status, the provider and
// the Retry-After it was given:
//
//     +0.000 s  mail 1, try 1  API   429        deferred  resend API  (rate_limit)  retry after 2 s
//
// A reader without the log beside it (an agent reading the MCP tool's text)
// asks for `senders: 'always'`: every line then names the client's IP and
// its MAIL FROM, which a test's failure text leaves out unless there were
// several senders.
import { readLog, type ReadLog, type SmtpAttempt } from './attempt-reading.js';
import { clockTime, formatDuration, offset, plural } from './format.js';

export interface TimelineOptions {
  /**
   * `when-several` (default): a line names its sender only when the log has
   * more than one. `always`: every line names the client IP and MAIL FROM.
   */
  readonly senders?: 'when-several' | 'always';
  /** How the heading shows the first attempt's time: its UTC time of day (`16:49:08.123 UTC`) by default. */
  readonly time?: (date: Date) => string;
}

/** `451 4.7.1`, or `no reply` for a dropped connection. */
export function replyOf(attempt: Pick<SmtpAttempt, 'code' | 'enhancedCode'>): string {
  return attempt.code === null ? 'no reply' : `${attempt.code}${attempt.enhancedCode ? ` ${attempt.enhancedCode}` : ''}`;
}

/** The whole timeline: a heading line, then one line per attempt. */
export function formatTimeline(address: string, attempts: readonly SmtpAttempt[], read: ReadLog = readLog(attempts), options: TimelineOptions = {}): string {
  const api = attempts.filter((a) => a.stage === 'api').length;
  const kind = api === 0 ? 'SMTP attempts' : api === attempts.length ? 'Provider API calls' : 'SMTP attempts and provider API calls';
  if (attempts.length === 0) return `SMTP attempts at ${address}: none.`;
  const first = attempts[0]!.at.getTime();
  const senders = new Set(attempts.map((a) => a.from.toLowerCase()));
  const always = options.senders === 'always';
  const label = (n: number, t: number) => `mail ${n}, try ${t}`;
  const width = Math.max(...read.entries.map((e) => label(e.delivery, e.try).length));
  const lines = read.entries.map(({ attempt, delivery, try: t, waitedMs }) => {
    const notes = [
      attempt.provider ? `${attempt.provider} API` : '',
      attempt.rule ? `(${attempt.rule})` : '',
      attempt.retryAfterMs !== null ? `retry after ${formatDuration(attempt.retryAfterMs)}` : '',
      waitedMs !== undefined ? `waited ${formatDuration(waitedMs)}` : '',
      always ? `client ${attempt.clientIp}, MAIL FROM <${attempt.from}>` : senders.size > 1 ? `from ${attempt.from || '<>'}` : '',
      attempt.subject !== null ? JSON.stringify(attempt.subject) : '',
    ].filter(Boolean);
    return [
      `  ${offset(attempt.at.getTime() - first).padStart(9)}`,
      label(delivery, t).padEnd(width),
      attempt.stage.toUpperCase().padEnd(4),
      replyOf(attempt).padEnd(9),
      attempt.outcome.padEnd(8),
      ...notes,
    ]
      .join('  ')
      .trimEnd();
  });
  const time = (options.time ?? clockTime)(attempts[0]!.at);
  const heading = `${kind} at ${address}: ${plural(read.deliveries.length, 'mail')}, ${plural(attempts.length, 'attempt')}, times from the first (${time}):`;
  return [heading, ...lines].join('\n');
}
