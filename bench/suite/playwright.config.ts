// The Playwright run `npm run bench -- suite` makes once per way: the signup
// spec in real Chromium, launched as the e2e suite launches it, 4 workers
// sharing the tests of one file (fullyParallel), against the mailroom server
// (MAILROOM_API_URL) and demo app (MAILROOM_BENCH_SUITE_APP_URL) that
// bench/suite.ts started for this way on free ports.
import { defineConfig } from '@playwright/test';
import type { MailroomOptions } from 'mailroomjs/playwright';
import { chromiumLaunchOptions } from '../../e2e/chromium.js';
import { ENV } from './ways.js';

export default defineConfig<MailroomOptions>({
  testDir: '.',
  testMatch: 'signup.bench.ts',
  workers: 4,
  fullyParallel: true,
  retries: 0,
  outputDir: process.env[ENV.output] ?? '../../test-results/bench-suite',
  reporter: [['./timings-reporter.ts']],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions(),
    baseURL: process.env[ENV.appURL],
    // No `mailroom` option: the fixture finds the API through MAILROOM_API_URL, as the hand-written loop does.
  },
});
