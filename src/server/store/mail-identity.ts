// What the attempt log keeps of a mail whose DATA was received: its
// Message-ID and Subject headers, read from the header block alone (no MIME
// parse), so that a retry of a mail can be told from a new one - by its
// Message-ID, or when the sender makes a new one for every try, by its
// subject.
import { decodeWords } from 'postal-mime';

const MAX_HEADER_BYTES = 64 * 1024;
const MAX_LENGTH = 998;

export interface MailIdentity {
  readonly messageId: string | undefined;
  readonly subject: string | undefined;
}

const fieldPattern = (name: string) => new RegExp(`(?:^|\\n)${name}[ \\t]*:([^\\r\\n]*(?:\\r?\\n[ \\t][^\\r\\n]*)*)`, 'i');
const MESSAGE_ID = fieldPattern('message-id');
const SUBJECT = fieldPattern('subject');

function field(head: string, pattern: RegExp): string | undefined {
  const match = pattern.exec(head);
  if (!match) return undefined;
  const value = match[1]!.replace(/\r?\n[ \t]/g, ' ').trim();
  return value === '' ? undefined : value.slice(0, MAX_LENGTH);
}

/** The Message-ID and (decoded) Subject headers of a message as received. */
export function mailIdentity(raw: Buffer): MailIdentity {
  const limit = Math.min(raw.length, MAX_HEADER_BYTES);
  let end = raw.indexOf('\r\n\r\n');
  if (end === -1 || end > limit) end = raw.indexOf('\n\n');
  if (end === -1 || end > limit) end = limit;
  const head = raw.toString('latin1', 0, end);
  const subject = field(head, SUBJECT);
  let decoded = subject;
  if (subject !== undefined) {
    try {
      decoded = decodeWords(subject);
    } catch {
      // An encoded word that does not decode is shown as it came.
    }
  }
  return { messageId: field(head, MESSAGE_ID), subject: decoded };
}
