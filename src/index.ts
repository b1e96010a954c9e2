// `mailroomjs`: what a test author uses without a runner plugin - inboxes and
// their waits, mail, filters, errors, the HTTP client, exactly-once stores.
// Every export is listed explicitly and is public API; runner-plugin authors
// find the test-inbox bridge in `mailroomjs/runner`.

// Inboxes and waits
export { createInbox, isInbox, Inbox } from './inbox/inbox.js';
export type { InboxOptions, WaitOptions, QuietOptions, ConnectionOptions } from './inbox/inbox-options.js';
export { DEFAULT_TIMEOUT_MS, DEFAULT_QUIET_MS } from './inbox/inbox-options.js';
export { DEFAULT_API_URL, DEFAULT_DOMAIN } from './contract/defaults.js';
export type { WaitInfo, InboxEvent } from './inbox/events.js';
export type { SourceLocation } from './inbox/call-site.js';
export type { PollEvent } from './wait/strategy.js';

// Messages
export { Mail, parseMail } from './inbox/mail.js';
export type { ParseMailOptions } from './inbox/mail.js';
export type { MailSummary, MessageDetail, MailAttachment, MailboxIndex, MailboxIndexEntry } from './client/messages.js';
export { extractLinks, extractCodes } from './contract/extract.js';
export { mailSnapshot, DEFAULT_MASKS } from './inbox/mail-snapshot.js';
export type { MailSnapshotOptions, SnapshotMail, SnapshotMask } from './inbox/mail-snapshot.js';

// Mail checks: mail.check()
export type { MailCheckOptions, LinkCheckOptions, HtmlCheckOptions, AcceptedFeature, SizeCheckOptions, LinkCookie } from './checks/options.js';
export type { MailCheckReport, MailProblem, ClientSupport, CheckName, Severity, ExtraCheck, CheckableMail } from './checks/problem.js';

// Filters
export { describeFilter } from './inbox/filter.js';
export type { MailFilter, TextMatcher } from './inbox/filter.js';

// Errors
export { MailroomError, MailroomApiError, MailroomNetworkError, isTransient } from './client/errors.js';
export { MailTimeoutError, UnexpectedMailError } from './inbox/wait-errors.js';
export type { WaitFailure, UnexpectedMailDetails, SkippedMail, SkipReason } from './inbox/wait-errors.js';

// The HTTP client, for services and tools beyond a wait
export { MailroomClient } from './client/client.js';
export type { ClientOptions, CallOptions, ListOptions, MailboxListing, MailboxIndexOptions } from './client/client.js';

// Backends: the embedded server's client, or a catcher's driver (docs/backends.md)
export { createBackend } from './backends/choose.js';
export type { BackendOptions } from './backends/choose.js';
export type { BackendName, MailBackend } from './backends/backend.js';
export type { BasicCredentials } from './backends/catcher-http.js';

// Addresses and exactly-once
export { freshAddress } from './contract/fresh-address.js';
export type { FreshAddressOptions } from './contract/fresh-address.js';
export { createHandledStore, openHandledStore } from './inbox/handled.js';
export type { HandledStore } from './inbox/handled.js';

// The SMTP deferral lab (embedded server): inbox.smtp
export type { InboxSmtp, WatchOptions, WatchOutcome } from './inbox/smtp.js';
export type {
  GreylistOptions,
  ThrottleOptions,
  ReplyRuleOptions,
  SlowOptions,
  DisconnectOptions,
  RateLimitOptions,
  UnavailableOptions,
} from './inbox/smtp-rule-options.js';
export type { ProviderName, ProviderStamp } from './contract/providers.js';
export { providerSettings } from './contract/provider-settings.js';
export type { ProviderSettings } from './contract/provider-settings.js';
export type { SmtpAttempt, SmtpRule, SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind, SmtpRuleStage } from './client/smtp-lab.js';

// Webhooks (embedded server): inbox.webhooks, and verifying what your handler receives
export { isWebhook } from './inbox/webhooks.js';
export type { InboxWebhooks, Webhook, AddWebhookOptions, WebhookRetryOptions, WebhookWatchOptions, WebhookWatchOutcome } from './inbox/webhooks.js';
export type {
  WebhookRegistration,
  WebhookDelivery,
  WebhookAttempt,
  WebhookDeadLetter,
  WebhookRetry,
  WebhookAttemptOutcome,
  WebhookDeliveryState,
} from './client/webhooks.js';
export { verifyWebhookSignature } from './client/verify-webhook.js';
export type { VerifyWebhookOptions, WebhookEvent, WebhookHeaders } from './client/verify-webhook.js';
export type { WebhookEventType } from './contract/webhooks.js';
export type { WireMessageReceived as WebhookMessageReceived, WireDeliveryOutcome as WebhookDeliveryOutcome } from './contract/webhook-wire.js';

// Injected time, to drive an inbox's waits from a test's own clock
export type { Clock, RandomSource } from './wait/clock.js';
