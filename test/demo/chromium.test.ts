// The browser finder the e2e config relies on.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { CHROMIUM_ARGS, chromiumLaunchOptions, DEBIAN_BROWSERS, findChromium } from '../../e2e/chromium.js';

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

test("without the override, Debian's headless shell, then Debian's chromium, then Playwright's download", () => {
  // The order, whatever this machine has: the paths are files that exist here.
  const shell = process.execPath;
  const full = fileURLToPath(import.meta.url);
  const elsewhere = fileURLToPath(new URL('./', import.meta.url));
  expect(findChromium({ env: {}, debianPaths: [shell, full], downloadedPath: () => elsewhere })).toBe(shell);
  expect(findChromium({ env: {}, debianPaths: ['/nowhere/shell', full], downloadedPath: () => elsewhere })).toBe(full);
  expect(findChromium({ env: {}, debianPaths: ['/nowhere/shell', '/nowhere/chromium'], downloadedPath: () => elsewhere })).toBe(elsewhere);
  expect(findChromium({ env: { MAILROOM_CHROMIUM: elsewhere }, debianPaths: [shell, full] })).toBe(elsewhere);
  const none = () => findChromium({ env: {}, debianPaths: ['/nowhere/shell', '/nowhere/chromium'], downloadedPath: () => '/nowhere/playwright/chrome' });
  expect(none).toThrow('  - /nowhere/shell (missing)\n  - /nowhere/chromium (missing)\n');
  expect(none).toThrow("Playwright's download /nowhere/playwright/chrome (missing)");
});

test("by default Debian's headless shell is looked for first, then its chromium", () => {
  expect(DEBIAN_BROWSERS).toEqual(['/usr/bin/chromium-headless-shell', '/usr/bin/chromium']);
});

test('this machine has a Chromium for the e2e suite, found as the e2e config finds it', () => {
  // Never skipped: where there is none, this fails with the finder's own
  // message, which says what to install (CI installs Chromium).
  const found = findChromium();
  expect(existsSync(found)).toBe(true);
});

test('launch options are headless with the container flags', () => {
  process.env.MAILROOM_CHROMIUM = process.execPath;
  expect(chromiumLaunchOptions()).toEqual({ executablePath: process.execPath, headless: true, args: [...CHROMIUM_ARGS] });
  expect(CHROMIUM_ARGS).toEqual(expect.arrayContaining(['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking']));
});
