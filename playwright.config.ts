import { defineConfig } from '@playwright/test';
import { mailroomWebServer, type MailroomOptions } from 'mailroomjs/playwright';
import { chromiumLaunchOptions } from './e2e/chromium.js';
import { TIMES_ENV } from './test/support/times.js';
import { API_URL, APP_URL, HTTP_PORT, RESEND_APP_PORT, SES_APP_PORT, SMTP_PORT, demoAppWebServer, providerDemoAppWebServer } from './e2e/servers.js';
import { MAILDEV_APP_URL, MAILDEV_URL, maildevDemoAppWebServer, maildevWebServer } from './e2e/maildev-servers.js';

// One mailroom server and one Acme demo app for the whole run, started by
// Playwright before the first test (see e2e/servers.ts for the ports).
// e2e/inner/ holds the suites that specs run as child processes (a
// deliberately failing run, retries, mail pictures); they are not part of
// this run. Two shards at once on one server are the pack check's
// (scripts/pack-shards.ts), from the packed package as a user runs it.
//
// The `maildev` project runs the signup spec again, unchanged, against a real
// maildev and a demo app that delivers to it (e2e/maildev-servers.ts): the
// fixture reads the catcher's mail (docs/backends.md). Run on its own with
// `MAILROOM_BACKEND=maildev` set, it carries no mailroom option at all, so
// the environment alone chooses the backend:
//   MAILROOM_BACKEND=maildev MAILROOM_API_URL=http://127.0.0.1:1127 npx playwright test --project=maildev
export default defineConfig<MailroomOptions>({
  testDir: 'e2e',
  testIgnore: ['inner/**'],
  // Two, as many as the cores: each worker has a Chromium of its own, and
  // on two cores four cost more CPU (231 s against 221 s for the whole run,
  // Chromium's renderers counted) and finished no sooner (175 s against 167 s).
  workers: 2,
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: [
    ['list'],
    ['html', { outputFolder: 'playwright-report', open: 'never' }],
    // `npm test` prints the slowest spec files at the end (test/support/times.ts).
    ...(process.env[TIMES_ENV] ? [['./e2e/support/times-reporter.ts'] as const] : []),
  ],
  // Never reused (a stale server on the port would answer for this code); see e2e/servers.ts.
  webServer: [
    // The web UI's "Check links too" may reach the demo app on loopback, and nothing else private.
    mailroomWebServer({ smtpPort: SMTP_PORT, httpPort: HTTP_PORT, linkCheckAllow: ['127.0.0.1'], reuseExistingServer: false }),
    demoAppWebServer,
    providerDemoAppWebServer('resend', RESEND_APP_PORT),
    providerDemoAppWebServer('ses', SES_APP_PORT),
    maildevWebServer,
    maildevDemoAppWebServer,
  ],
  // How long a web-first assertion waits for the page to come round. `npm
  // test` runs Playwright beside Vitest, the linters and the pack check on
  // two cores, and the 5 s default ran out there with a page that was only
  // slow (stop 34's CI: the web UI's inline image, a request, a MIME parse
  // and a new frame behind one click). The assertions are about the state
  // the page reaches, never about how fast; `.ci/run` prints a failed test's
  // timeline, so a slow page and a stuck one can be told apart.
  expect: { timeout: 10_000 },
  // A test's own timeout is a guard against a hang, never a speed claim, and
  // the same two cores set it: stop 36's CI ran out the 30 s default on the
  // mail checks' broken mail (a Chromium launched for the checks and axe run
  // twice, 8.8 s quiet), with every step moving and none stuck. Specs that
  // run a whole inner Playwright run set their own, longer timeouts.
  timeout: 60_000,
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions(),
    trace: 'retain-on-failure',
    baseURL: APP_URL,
    mailroom: { apiURL: API_URL },
  },
  projects: [
    { name: 'chromium', testIgnore: ['inner/**'] },
    // The signup spec again, unchanged, with the demo app sending through Resend's and SES's SDKs (docs/providers.md).
    // The signup flow (the mail's link, then the welcome mail); the rest of the spec is about the fixture, not how the app sends.
    { name: 'resend', testMatch: 'signup.spec.ts', grep: /signs up, confirms/, use: { baseURL: `http://127.0.0.1:${RESEND_APP_PORT}` } },
    { name: 'ses', testMatch: 'signup.spec.ts', grep: /signs up, confirms/, use: { baseURL: `http://127.0.0.1:${SES_APP_PORT}` } },
    {
      name: 'maildev',
      testMatch: 'signup.spec.ts',
      use: {
        baseURL: MAILDEV_APP_URL,
        mailroom: process.env.MAILROOM_BACKEND?.trim() === 'maildev' ? {} : { backend: 'maildev', apiURL: MAILDEV_URL },
      },
    },
  ],
});
