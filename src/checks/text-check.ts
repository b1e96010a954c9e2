// `text`: a mail needs a text/plain part. Clients that show no HTML (and
// people who turn it off) show the text part, spam filters count a missing
// one against the sender, and without HTML or text there is nothing to read.
import { problem, type CheckableMail, type MailProblem } from './problem.js';

export function checkText(mail: CheckableMail): MailProblem[] {
  if (mail.text.trim() !== '') return [];
  if (mail.html.trim() === '') {
    return [
      problem({
        check: 'text',
        severity: 'error',
        message: 'The mail has no body: neither an HTML nor a text part.',
        fix: 'Send the content as a text/plain part (and an HTML one if you like).',
      }),
    ];
  }
  return [
    problem({
      check: 'text',
      severity: 'error',
      message: 'The mail has HTML but no text/plain alternative.',
      fix: 'Add a text part with the same content and links (nodemailer: `text` beside `html`), sent as multipart/alternative.',
    }),
  ];
}
