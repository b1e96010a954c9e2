// What a test's report shows of its mail: each received mail as HTML and
// text, and on a failed wait the story of what it saw and passed over.
import type { MailSummary } from '../client/messages.js';
import { formatSummary } from '../inbox/describe.js';
import { formatDuration } from '../contract/format.js';
import type { InboxEvent } from '../inbox/events.js';
import type { Mail } from '../inbox/mail.js';
import { MailTimeoutError, SKIP_REASONS, UnexpectedMailError } from '../inbox/wait-errors.js';

/** The annotation type of everything mailroom adds to a test's report, in both runners. */
export const ANNOTATION_TYPE = 'mailroom';

/** An attachment in the runner's report. */
export interface ReportAttachment {
  readonly name: string;
  readonly contentType: string;
  readonly body: string;
}

/** Attaches what a finished wait has to show: the mails it received, or what a failed one saw. */
export function reportEvent(event: InboxEvent, attach: (attachment: ReportAttachment) => void): void {
  if (event.type !== 'wait-end') return;
  if (event.outcome === 'received') {
    for (const mail of event.mails) for (const attachment of mailAttachments(mail)) attach(attachment);
  } else if (event.outcome === 'failed') {
    const seen = seenAttachment(event.error);
    if (seen) attach(seen);
  }
}

/** A received mail as report attachments: its HTML and its text, each when present. */
export function mailAttachments(mail: Mail): ReportAttachment[] {
  const name = mailAttachmentName(mail);
  const out: ReportAttachment[] = [];
  if (mail.html) out.push({ name: `${name}.html`, contentType: 'text/html', body: mail.html });
  if (mail.text || !mail.html) out.push({ name: `${name}.txt`, contentType: 'text/plain', body: mailText(mail) });
  return out;
}

/** What a mail's attachments are called, before the extension: `mail "Confirm your email" to a@mailroom.test`. */
export function mailAttachmentName(mail: Pick<Mail, 'subject' | 'address'>): string {
  return `mail ${JSON.stringify(mail.subject)} to ${mail.address}`;
}

function mailText(mail: Mail): string {
  const head = [`From: ${mail.from}`, `To: ${mail.to.join(', ')}`, `Subject: ${mail.subject}`, `Received: ${mail.receivedAt.toISOString()}`];
  if (mail.links.length > 0) head.push(`Links: ${mail.links.join(' ')}`);
  if (mail.codes.length > 0) head.push(`Codes: ${mail.codes.join(' ')}`);
  return `${head.join('\n')}\n\n${mail.text}`;
}

/** On a failed wait: the error's story and every mail it saw, one per line. */
export function seenAttachment(error: Error): ReportAttachment | undefined {
  let seen: readonly MailSummary[];
  let heading: string;
  let passedOver: string[] = [];
  if (error instanceof MailTimeoutError) {
    seen = [...error.rejected, ...error.unfetched];
    passedOver = error.skipped.map(({ summary, reason }) => `- ${formatSummary(summary)} (id ${summary.id}; ${SKIP_REASONS[reason].toLowerCase()})`);
    heading = `Waited ${formatDuration(error.elapsedMs)} of ${formatDuration(error.budgetMs)} at ${error.address} for ${error.filter}.`;
  } else if (error instanceof UnexpectedMailError) {
    seen = error.arrived;
    heading = `Mail arrived at ${error.address} that should not have.`;
  } else {
    return undefined;
  }
  const lines = [...seen.map((s) => `- ${formatSummary(s)} (id ${s.id})`), ...passedOver];
  if (lines.length === 0) lines.push('nothing arrived at all');
  return { name: 'mail seen and rejected', contentType: 'text/plain', body: `${heading}\n\n${error.message}\n\n${lines.join('\n')}\n` };
}
