// The browser finder the e2e config relies on.
import { existsSync } from 'node:fs';
import { afterEach, expect, test } from 'vitest';
import { CHROMIUM_ARGS, chromiumLaunchOptions, findChromium } from '../../e2e/chromium.js';

const saved = process.env.MAILROOM_CHROMIUM;
afterEach(() => {
  if (saved === undefined) delete process.env.MAILROOM_CHROMIUM;
  else process.env.MAILROOM_CHROMIUM = saved;
});

test('MAILROOM_CHROMIUM wins when it points at a file', () => {
  process.env.MAILROOM_CHROMIUM = process.execPath;
  expect(findChromium()).toBe(process.execPath);
});

test('a MAILROOM_CHROMIUM that points nowhere is an error naming the path', () => {
  process.env.MAILROOM_CHROMIUM = '/nowhere/chromium';
  expect(() => findChromium()).toThrow(
    'MAILROOM_CHROMIUM is set to /nowhere/chromium, but there is no file there. Point it at a Chromium executable or unset it.',
  );
});

test.runIf(existsSync('/usr/bin/chromium'))("without the override, Debian's /usr/bin/chromium is used", () => {
  delete process.env.MAILROOM_CHROMIUM;
  expect(findChromium()).toBe('/usr/bin/chromium');
});

test('launch options are headless with the container flags', () => {
  process.env.MAILROOM_CHROMIUM = process.execPath;
  expect(chromiumLaunchOptions()).toEqual({ executablePath: process.execPath, headless: true, args: [...CHROMIUM_ARGS] });
  expect(CHROMIUM_ARGS).toEqual(expect.arrayContaining(['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking']));
});
