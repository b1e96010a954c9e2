// mailroomjs/jest: `useInbox()` and the `toReceiveMail` matcher for Jest 29
// and 30, a thin adapter over the core (mailroomjs/runner). Its matchers and
// their failure text are the ones of mailroomjs/vitest and
// mailroomjs/playwright. Importing it registers the matchers on the test
// file's `expect`; it also ships as CommonJS (dist/cjs/, scripts/build-cjs.ts)
// for ts-jest and babel-jest projects.
import './matchers.js';

export { useInbox } from './use-inbox.js';
export type { MailroomJestMatchers } from './matchers.js';
export type {
  ToReceiveMailOptions,
  ToHaveBeenRetriedOptions,
  ToHaveBackedOffOptions,
  ToHaveDeliveredOptions,
  ToHaveDeadLetteredOptions,
  ToPassMailChecksOptions,
  ToReceiveMailExpectsAnInbox,
  SmtpMatchersExpectAnInbox,
  WebhookMatchersExpectAWebhook,
  ToPassMailChecksExpectsAMail,
} from '../runner/expect-matchers.js';
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
