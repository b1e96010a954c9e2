// mailroomjs/playwright: the `inbox` fixture and `toReceiveMail` for
// Playwright Test, a thin adapter over the core (mailroomjs/runner). Its names
// match mailroomjs/vitest's, so a test reads the same in both runners.
import { test as base, expect as baseExpect } from '@playwright/test';
import { mailroomFixtures, type MailroomFixtures, type MailroomOptions } from './fixtures.js';
import { mailroomMatchers } from './matchers.js';

/** Playwright's `test` with the `mailroom` option and the `inbox` fixture. */
export const test = base.extend<MailroomFixtures & MailroomOptions>(mailroomFixtures);

/** Playwright's `expect` with `toReceiveMail`, `toHaveBeenRetried`, `toHaveBackedOff`, `toHaveDelivered`, `toHaveDeadLettered` and `toPassMailChecks`. */
export const expect = baseExpect.extend(mailroomMatchers);

export { mailroomFixtures } from './fixtures.js';
export type { MailroomFixtures, MailroomOptions } from './fixtures.js';
export { mailroomMatchers } from './matchers.js';
export type { ToReceiveMailOptions, ToHaveBeenRetriedOptions, ToHaveBackedOffOptions, ToHaveDeliveredOptions, ToHaveDeadLetteredOptions } from './matchers.js';
export type { ToPassMailChecksOptions } from './mail-checks.js';
export { accessibilityCheck } from './accessibility-check.js';
export type { AccessibilityTarget } from './accessibility-check.js';
export type { ExtraCheck } from '../checks/problem.js';
export { openMail, MAIL_ORIGIN, PHONE_VIEWPORT } from './open-mail.js';
export type { OpenMailOptions, OpenableMail } from './open-mail.js';
export { mailroomWebServer } from './web-server.js';
export type { MailroomWebServerOptions } from './web-server.js';

// The types a test touches and the errors it catches, as every runner's adapter exports them.
export * from '../runner/test-surface.js';
