import { defineConfig } from '@playwright/test';
import { mailroomWebServer, type MailroomOptions } from 'mailroomjs/playwright';
import { chromiumLaunchOptions } from './e2e/chromium.js';
import { TIMES_ENV } from './test/support/times.js';
import { API_URL, APP_URL, HTTP_PORT, SMTP_PORT, demoAppWebServer } from './e2e/servers.js';

// One mailroom server and one Acme demo app for the whole run, started by
// Playwright before the first test (see e2e/servers.ts for the ports).
// e2e/inner/ holds the suites that specs run as child processes (shards, a
// deliberately failing run); they are not part of this run.
export default defineConfig<MailroomOptions>({
  testDir: 'e2e',
  testIgnore: ['inner/**'],
  workers: 4,
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: [
    ['list'],
    ['html', { outputFolder: 'playwright-report', open: 'never' }],
    // `npm test` prints the slowest spec files at the end (test/support/times.ts).
    ...(process.env[TIMES_ENV] ? [['./e2e/support/times-reporter.ts'] as const] : []),
  ],
  // Never reused (a stale server on the port would answer for this code); see e2e/servers.ts.
  webServer: [mailroomWebServer({ smtpPort: SMTP_PORT, httpPort: HTTP_PORT, reuseExistingServer: false }), demoAppWebServer],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions(),
    trace: 'retain-on-failure',
    baseURL: APP_URL,
    mailroom: { apiURL: API_URL },
  },
});
