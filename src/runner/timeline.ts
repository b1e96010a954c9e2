// The attempt timeline as a failure message and the report print it: one
// line per attempt, its time from the first, its mail and try, the stage,
// the reply, the outcome, and how long the sender waited before a retry.
//
//   SMTP attempts at signup-…@mailroom.test: 2 mails, 3 attempts, times from the first (16:49:08.123):
//     +0.000 s  mail 1, try 1  RCPT  451 4.7.1  deferred  (greylist)
//     +1.204 s  mail 1, try 2  DATA  250 2.6.0  accepted  waited 1.2 s  "Confirm your email"
//     +1.210 s  mail 2, try 1  DATA  250 2.6.0  accepted  "Welcome to Acme"
import type { SmtpAttempt } from '../client/smtp-lab.js';
import { formatDuration } from '../inbox/describe.js';
import { readLog, type ReadLog } from './deliveries.js';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `16:49:08.123`, in local time as the rest of mailroom's messages show times. */
export function clockTime(date: Date): string {
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** `+1.204 s`: a time offset, always in seconds with ms. */
export function offset(ms: number): string {
  return `+${(ms / 1000).toFixed(3)} s`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The whole timeline: a heading line, then one line per attempt. */
export function formatTimeline(address: string, attempts: readonly SmtpAttempt[], read: ReadLog = readLog(attempts)): string {
  if (attempts.length === 0) return `SMTP attempts at ${address}: none.`;
  const first = attempts[0]!.at.getTime();
  const senders = new Set(attempts.map((a) => a.from.toLowerCase()));
  const label = (n: number, t: number) => `mail ${n}, try ${t}`;
  const width = Math.max(...read.entries.map((e) => label(e.delivery, e.try).length));
  const lines = read.entries.map(({ attempt, delivery, try: t, waitedMs }) => {
    const reply = attempt.code === null ? 'no reply' : `${attempt.code}${attempt.enhancedCode ? ` ${attempt.enhancedCode}` : ''}`;
    const notes = [
      attempt.rule ? `(${attempt.rule})` : '',
      waitedMs !== undefined ? `waited ${formatDuration(waitedMs)}` : '',
      senders.size > 1 ? `from ${attempt.from || '<>'}` : '',
      attempt.subject !== null ? JSON.stringify(attempt.subject) : '',
    ].filter(Boolean);
    return [
      `  ${offset(attempt.at.getTime() - first).padStart(9)}`,
      label(delivery, t).padEnd(width),
      attempt.stage.toUpperCase().padEnd(4),
      reply.padEnd(9),
      attempt.outcome.padEnd(8),
      ...notes,
    ]
      .join('  ')
      .trimEnd();
  });
  const heading = `SMTP attempts at ${address}: ${plural(read.deliveries.length, 'mail')}, ${plural(attempts.length, 'attempt')}, times from the first (${clockTime(attempts[0]!.at)}):`;
  return [heading, ...lines].join('\n');
}
