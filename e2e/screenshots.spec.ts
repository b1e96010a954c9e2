// The `screenshots` option through an inner Playwright run (a child process
// against the same servers): a PNG of each received mail is attached to a
// failed test by default, to every test with 'on', and never with 'off'.
import { test, expect, type Page } from '@playwright/test';
import { runInner, type InnerResult } from './support/inner-run.js';

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString('latin1'), 'a PNG signature').toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

// Browser code, as text: this project's types have no DOM (see open-mail.spec.ts).
const INKS = `async (base64) => {
  const image = new Image();
  image.src = 'data:image/png;base64,' + base64;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext('2d');
  context.drawImage(image, 0, 0);
  const pixels = context.getImageData(0, 0, image.width, image.height).data;
  let dark = 0;
  let linkBlue = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    const r = pixels[i], g = pixels[i + 1], b = pixels[i + 2];
    if (r + g + b < 200) dark++;
    if (b > 180 && r < 90 && g < 90) linkBlue++;
  }
  return { dark, linkBlue };
}`;
const BLANK = `(width, height) => {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  context.fillStyle = '#fff';
  context.fillRect(0, 0, width, height);
  return canvas.toDataURL('image/png');
}`;

/**
 * What a PNG shows, decoded by Chromium onto a canvas: how many pixels are
 * dark (text) and how many are a link's blue (Chromium's unvisited #0000ee).
 */
async function inks(page: Page, png: Buffer): Promise<{ dark: number; linkBlue: number }> {
  return page.evaluate<{ dark: number; linkBlue: number }>(`(${INKS})(${JSON.stringify(png.toString('base64'))})`);
}

/** A blank white PNG of `width` x `height`, drawn by Chromium: what the pixel check must refuse. */
async function blankPng(page: Page, width: number, height: number): Promise<Buffer> {
  const dataUrl = await page.evaluate<string>(`(${BLANK})(${width}, ${height})`);
  return Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
}

test('a picture of each received mail: on failure by default, always with "on", never with "off"', async ({ page }) => {
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
  // A file in the test's results, whose path the list reporter prints under the failure.
  expect(run.output).toMatch(
    /attachment #\d+: mail "Confirm your email" to default-failed-\S+\.png \(image\/png\)[─ ]*\n\s+\S*attachments\/mail-Confirm-your-email-\S+\.png\n/,
  );
  const picture = Buffer.from(failed[0]!.body!, 'base64');
  const size = pngSize(picture);
  expect(size.width).toBe(800);
  // The demo mail's five paragraphs, not an empty page: text, and its
  // "Confirm my email" link in a link's blue. A blank page of the same size
  // has neither (checked too, so the check itself can fail).
  expect(size.height).toBeGreaterThan(200);
  const shown = await inks(page, picture);
  expect(shown.dark, 'dark (text) pixels in the picture').toBeGreaterThan(500);
  expect(shown.linkBlue, "pixels in a link's blue in the picture").toBeGreaterThan(20);
  expect(await inks(page, await blankPng(page, size.width, size.height))).toEqual({ dark: 0, linkBlue: 0 });
  // Next to the HTML and text already attached.
  expect(attachments('default, failed: the mail is pictured').map((a) => a.contentType)).toEqual(
    expect.arrayContaining(['text/html', 'text/plain', 'image/png']),
  );

  expect(pictures('default, passed: no picture')).toEqual([]);
  expect(attachments('default, passed: no picture').map((a) => a.contentType)).toContain('text/html');
  expect(pictures('on › on, passed: the mail is pictured')).toHaveLength(1);
  expect(pictures('off › off, failed: no picture')).toEqual([]);
});
