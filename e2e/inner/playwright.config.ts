// The suites under e2e/inner/ run as child processes of outer specs
// (a deliberately failing run, retries, mail pictures), never in the outer
// run. They reach the outer run's servers: the demo app through the same
// port variables, the mailbox API through MAILROOM_API_URL only (no
// `mailroom` option here), as a CI job pointed at a server would.
import { defineConfig } from '@playwright/test';
import type { MailroomOptions } from 'mailroomjs/playwright';
import { chromiumLaunchOptions } from '../chromium.js';
import { APP_URL } from '../servers.js';

const RETRIED = 'retries.inner.ts';

export default defineConfig<MailroomOptions>({
  testDir: '.',
  testMatch: '*.inner.ts',
  // Text snapshots (mail-snapshot.inner.ts) are the same on every OS: no platform in their names.
  snapshotPathTemplate: '{testDir}/__snapshots__/{testFilePath}/{arg}{ext}',
  outputDir: process.env.MAILROOM_INNER_OUTPUT ?? '../../test-results/inner',
  workers: 2,
  fullyParallel: true,
  reporter: [['list'], ['json', { outputFile: process.env.MAILROOM_INNER_REPORT ?? '../../test-results/inner-report.json' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions(),
    baseURL: APP_URL,
  },
  projects: [
    { name: 'suites', testIgnore: RETRIED },
    // What `--retries=1 --repeat-each=2` would give, as a project of its
    // own, so these tests share one run (one Playwright process) with the
    // other suites instead of needing flags that would apply to them all.
    // Two repetitions, each retried, are four attempts to tell apart; each
    // failed attempt costs a new worker.
    { name: 'retried', testMatch: RETRIED, retries: 1, repeatEach: 2 },
  ],
});
