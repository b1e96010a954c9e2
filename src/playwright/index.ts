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
export type { MailCheckOptions, LinkCheckOptions, HtmlCheckOptions, AcceptedFeature, SizeCheckOptions, LinkCookie } from '../checks/options.js';
export type { MailCheckReport, MailProblem, ClientSupport, CheckName, Severity, ExtraCheck } from '../checks/problem.js';
export { openMail, MAIL_ORIGIN, PHONE_VIEWPORT } from './open-mail.js';
export type { OpenMailOptions, OpenableMail } from './open-mail.js';
export { mailroomWebServer } from './web-server.js';
export type { MailroomWebServerOptions } from './web-server.js';

// The types a test touches, so one import is enough.
export type { Inbox } from '../inbox/inbox.js';
export type { Mail } from '../inbox/mail.js';
export type { MailSnapshotOptions, SnapshotMask } from '../inbox/mail-snapshot.js';
export type { MailAttachment, MailSummary } from '../client/messages.js';
export type { MailFilter, TextMatcher } from '../inbox/filter.js';
export type { InboxSmtp } from '../inbox/smtp.js';
export type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
export type { InboxWebhooks, Webhook, AddWebhookOptions } from '../inbox/webhooks.js';
export type { WebhookDelivery, WebhookAttempt, WebhookDeadLetter, WebhookEventType } from '../client/webhooks.js';
export type { MailroomTestOptions } from '../runner/test-options.js';
export { MailTimeoutError, UnexpectedMailError } from '../inbox/wait-errors.js';
export { MailroomError } from '../client/errors.js';
