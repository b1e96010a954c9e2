// `size`: Gmail shows only the first ~102 KB of a mail's HTML and hides the
// rest behind "[Message clipped] View entire message", footer and
// unsubscribe link included; and mail servers refuse messages past their
// size limit (10 MB is a common low one).
import { DEFAULT_CLIP_BYTES, DEFAULT_MAX_BYTES, type SizeCheckOptions } from './options.js';
import { problem, type CheckableMail, type MailProblem } from './problem.js';

export function checkSize(mail: CheckableMail, options: SizeCheckOptions = {}): MailProblem[] {
  const clipBytes = options.clipBytes ?? DEFAULT_CLIP_BYTES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const problems: MailProblem[] = [];
  const htmlBytes = utf8Bytes(mail.html);
  if (htmlBytes > clipBytes) {
    problems.push(
      problem({
        check: 'size',
        severity: 'error',
        message: `The HTML is ${formatBytes(htmlBytes)}, over the ${formatBytes(clipBytes)} at which Gmail clips a mail (hiding its end, the footer and unsubscribe link with it).`,
        fix: `Cut ${formatBytes(htmlBytes - clipBytes)} from the HTML: inline less CSS, drop comments and unused markup, minify it.`,
        bytes: htmlBytes,
        limit: clipBytes,
      }),
    );
  }
  if (mail.size > maxBytes) {
    problems.push(
      problem({
        check: 'size',
        severity: 'warning',
        message: `The whole message is ${formatBytes(mail.size)}, over the ${formatBytes(maxBytes)} limit (some mail servers refuse it).`,
        fix: 'Link to large files instead of attaching them, and shrink the images the mail carries.',
        bytes: mail.size,
        limit: maxBytes,
      }),
    );
  }
  return problems;
}

/** The bytes a text takes in UTF-8, as it travels in a mail. */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

/** `104.5 KB (107,008 bytes)`: the unit people know, with the exact count to compare. */
export function formatBytes(bytes: number): string {
  const exact = `${bytes.toLocaleString('en-US')} bytes`;
  if (bytes < 1024) return exact;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KB'] : [bytes / (1024 * 1024), 'MB'];
  return `${value.toFixed(1)} ${unit} (${exact})`;
}
