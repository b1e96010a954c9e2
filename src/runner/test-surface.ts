// The types a test touches and the errors it catches, exported by every
// runner adapter (mailroomjs/playwright, mailroomjs/vitest, mailroomjs/jest)
// beside its own names, so one import is enough and the three lists cannot
// drift apart.
export type { MailCheckOptions, LinkCheckOptions, HtmlCheckOptions, AcceptedFeature, SizeCheckOptions, LinkCookie } from '../checks/options.js';
export type { MailCheckReport, MailProblem, ClientSupport, CheckName, Severity } from '../checks/problem.js';
export type { Inbox } from '../inbox/inbox.js';
export type { Mail } from '../inbox/mail.js';
export type { MailSnapshotOptions, SnapshotMask } from '../inbox/mail-snapshot.js';
export type { MailAttachment, MailSummary } from '../client/messages.js';
export type { MailFilter, TextMatcher } from '../inbox/filter.js';
export type { InboxSmtp } from '../inbox/smtp.js';
export type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
export type { InboxWebhooks, Webhook, AddWebhookOptions } from '../inbox/webhooks.js';
export type { WebhookDelivery, WebhookAttempt, WebhookDeadLetter, WebhookEventType } from '../client/webhooks.js';
export type { MailroomTestOptions } from './test-options.js';
export { MailTimeoutError, UnexpectedMailError } from '../inbox/wait-errors.js';
export { MailroomError } from '../client/errors.js';
