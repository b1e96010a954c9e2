// The Message-ID header of a message as received, read from its header block
// alone (no MIME parse): what the attempt log keeps, so a retry of a mail can
// be told from a new one once its DATA has been seen.

const MAX_HEADER_BYTES = 64 * 1024;
const MAX_LENGTH = 998;

/** The Message-ID header's value, unfolded and trimmed, or undefined when there is none. */
export function headerMessageId(raw: Buffer): string | undefined {
  const limit = Math.min(raw.length, MAX_HEADER_BYTES);
  let end = raw.indexOf('\r\n\r\n');
  if (end === -1 || end > limit) end = raw.indexOf('\n\n');
  if (end === -1 || end > limit) end = limit;
  const head = raw.toString('latin1', 0, end);
  const match = /(?:^|\n)message-id[ \t]*:([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)/i.exec(head);
  if (!match) return undefined;
  const value = match[1]!.replace(/\r?\n[ \t]/g, ' ').trim();
  return value === '' ? undefined : value.slice(0, MAX_LENGTH);
}
