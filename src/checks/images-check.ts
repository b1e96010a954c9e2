// `images`: an image needs `alt` text (shown while images are blocked, which
// many clients do by default, and read by screen readers; `alt=""` marks a
// decorative one); a relative `src` can never load in a mail; and a remote
// image over plain http is blocked or flagged as insecure by some clients.
import type { HtmlReading } from './html-reading.js';
import { problem, type MailProblem } from './problem.js';

export function checkImages(reading: HtmlReading): MailProblem[] {
  const problems: MailProblem[] = [];
  for (const image of reading.images) {
    const name = image.src === '' ? 'An <img> with no src' : `The image ${image.src}`;
    if (image.alt === null) {
      problems.push(
        problem({
          check: 'images',
          severity: 'error',
          message: `${name} has no alt text (${image.where}).`,
          fix: 'Add alt="…" saying what the image shows, or alt="" if it is only decoration.',
          url: image.src,
          where: image.where,
        }),
      );
    }
    if (image.src === '' || !/^(https?:|cid:|data:)/i.test(image.src)) {
      problems.push(
        problem({
          check: 'images',
          severity: 'error',
          message: `${name} cannot load in a mail: its src is not an absolute https URL, a cid: part or a data: URL (${image.where}).`,
          fix: 'Give the image an absolute https:// URL, or attach it and refer to it by cid:.',
          url: image.src,
          where: image.where,
        }),
      );
    } else if (/^http:/i.test(image.src)) {
      problems.push(
        problem({
          check: 'images',
          severity: 'warning',
          message: `${name} is loaded over plain http (${image.where}).`,
          fix: 'Serve the image over https.',
          url: image.src,
          where: image.where,
        }),
      );
    }
  }
  return problems;
}
