// The checks take time in proportion to the HTML, within their bounds
// (src/checks/bounds.ts), whoever wrote it: before, the HTML reader counted
// the lines before every tag again, so 100 KB of `<i>` tags took 10 s to
// read and 1 MB hours, on the thread of the test (or of the server). Real
// time, so in vitest.config.ts's TIMING list. The bound tells linear from
// quadratic, not fast from slow: quiet, each takes 0.1-0.3 s; beside other
// work on this two-core machine one took 1.14 s; the old code took 10 s and
// more at these sizes.
const BOUND_MS = 5_000;
import { describe, expect, it } from 'vitest';
import { checkMail } from '../../src/checks/run-checks.js';

const mail = (html: string) => ({ html, text: 'The text part.', size: html.length, subject: 'A mail' });

async function timed(html: string, only: Parameters<typeof checkMail>[1]) {
  const start = performance.now();
  const report = await checkMail(mail(html), only);
  return { report, ms: performance.now() - start };
}

describe('the time the checks take', () => {
  it('checks a 1 MB mail of <i> tags within the bound', async () => {
    const { report, ms } = await timed('<i>\n'.repeat(256 * 1024), { only: ['html', 'images'] });
    expect(report.problems.map((p) => p.message)).toEqual([
      expect.stringMatching(/^The HTML is 1\.0 MB .* too large to check: the html check/),
      expect.stringMatching(/^The HTML is 1\.0 MB .* too large to check: the images check/),
    ]);
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('reads 240 KB of images, each one a problem with its line, within the bound', async () => {
    const { report, ms } = await timed('<img alt="">\n'.repeat(19_000), { only: ['images'] });
    expect(report.problems.at(-2)?.message).toBe(
      'An <img> with no src cannot load in a mail: its src is not an absolute https URL, a cid: part or a data: URL (line 100: <img alt="">).',
    );
    expect(ms).toBeLessThan(BOUND_MS);
  });

  it('stops reading 200 KB of nested <i> tags at the depth it reads, within the bound', async () => {
    const { report, ms } = await timed('<i>\n'.repeat(50 * 1024), { only: ['links', 'images'] });
    expect(report.problems.map((p) => p.check)).toEqual(['links', 'images']);
    expect(ms).toBeLessThan(BOUND_MS);
  });
});
