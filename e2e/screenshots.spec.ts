// The `screenshots` option through an inner Playwright run (a child process
// against the same servers): a PNG of each received mail is attached to a
// failed test by default, to every test with 'on', and never with 'off'.
import { test, expect } from '@playwright/test';
import { runInner, type InnerResult } from './support/inner-run.js';

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1'), 'a PNG signature').toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

test('a picture of each received mail: on failure by default, always with "on", never with "off"', async () => {
  test.setTimeout(120_000);
  const run = await runInner(['screenshots.inner.ts']);
  expect(run.report.stats, run.output).toMatchObject({ expected: 2, unexpected: 2 });
  const attachments = (title: string): InnerResult['result']['attachments'] => {
    const result = run.results.find((r) => r.title === title);
    if (!result) throw new Error(`no result for "${title}" in:\n${run.output}`);
    return result.result.attachments;
  };
  const pictures = (title: string) => attachments(title).filter((a) => a.contentType === 'image/png');

  const failed = pictures('default, failed: the mail is pictured');
  expect(failed.map((a) => a.name)).toEqual([
    expect.stringMatching(/^mail "Confirm your email" to default-failed-the-mail-is-[a-z-]*[a-z2-7]{16}@mailroom\.test\.png$/),
  ]);
  const size = pngSize(Buffer.from(failed[0]!.body!, 'base64'));
  expect(size.width).toBe(800);
  // The demo mail's five paragraphs, not an empty page.
  expect(size.height).toBeGreaterThan(200);
  // Next to the HTML and text already attached.
  expect(attachments('default, failed: the mail is pictured').map((a) => a.contentType)).toEqual(
    expect.arrayContaining(['text/html', 'text/plain', 'image/png']),
  );

  expect(pictures('default, passed: no picture')).toEqual([]);
  expect(attachments('default, passed: no picture').map((a) => a.contentType)).toContain('text/html');
  expect(pictures('on › on, passed: the mail is pictured')).toHaveLength(1);
  expect(pictures('off › off, failed: no picture')).toEqual([]);
});
