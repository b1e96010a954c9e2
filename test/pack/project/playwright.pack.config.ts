// The README's playwright.config.ts as it is, plus only what this machine
// needs: the Chromium the pack check found (e2e/chromium.ts: Debian's, or
// MAILROOM_CHROMIUM) instead of Playwright's download, and a plain reporter.
import { defineConfig } from '@playwright/test';
import config from './playwright.config.js';

const executablePath = process.env.MAILROOM_CHROMIUM;
if (!executablePath) throw new Error('Set MAILROOM_CHROMIUM to a Chromium executable (scripts/pack-check.ts does)');

export default defineConfig(config, {
  reporter: 'list',
  use: { launchOptions: { executablePath, args: JSON.parse(process.env.PACK_CHROMIUM_ARGS ?? '[]') as string[] } },
});
