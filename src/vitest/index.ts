// mailroomjs/vitest: the `inbox` fixture and the `toReceiveMail` matcher for
// Vitest 4, a thin adapter over the core (mailroomjs/runner). Its names match
// mailroomjs/playwright's, so a test reads the same in both runners.

// Registers itself: `expect(mail).toMatchSnapshot()` stores `mail.snapshot()`.
import './mail-serializer.js';

export { test, it } from './fixtures.js';
export type { MailroomFixtures, MailroomOptions } from './fixtures.js';
export { expect } from './matchers.js';
export type {
  ToReceiveMailOptions,
  ToReceiveMailExpectsAnInbox,
  ToHaveBeenRetriedOptions,
  ToHaveBackedOffOptions,
  SmtpMatchersExpectAnInbox,
  ToHaveDeliveredOptions,
  ToHaveDeadLetteredOptions,
  WebhookMatchersExpectAWebhook,
  ToPassMailChecksOptions,
  ToPassMailChecksExpectsAMail,
} from './matchers.js';
export type { MailCheckOptions, LinkCheckOptions, HtmlCheckOptions, AcceptedFeature, SizeCheckOptions, LinkCookie } from '../checks/options.js';
export type { MailCheckReport, MailProblem, ClientSupport, CheckName, Severity } from '../checks/problem.js';

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
