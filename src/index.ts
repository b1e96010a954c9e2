// The core's public surface. Every export is listed explicitly.

// Inboxes and waits
export { createInbox, isInbox, Inbox } from './inbox/inbox.js';
export type { InboxOptions, WaitOptions, QuietOptions, WaitInfo, InboxEvent } from './inbox/inbox.js';
export type { PollEvent } from './wait/strategy.js';

// Messages
export { Mail, parseMail } from './inbox/mail.js';
export type { ParseMailOptions } from './inbox/mail.js';
export type { MailAttachment, MessageDetail } from './client/messages.js';
export type { MailSummary } from './client/messages.js';
export { extractLinks, extractCodes } from './inbox/extract.js';

// Filters and the words for them
export { compileFilter, describeFilter } from './inbox/filter.js';
export type { MailFilter, TextMatcher, CompiledFilter } from './inbox/filter.js';
export { describeWait } from './inbox/describe.js';
export type { DescribeWaitOptions, WaitKind } from './inbox/describe.js';
export { formatSummary, formatSummaries, formatDuration } from './inbox/describe.js';

// The shared matcher for runner adapters
export { matchReceiveMail } from './runner/matcher.js';
export type { ReceiveMailOptions, ReceiveMailResult } from './runner/matcher.js';

// One test's inbox, for runner plugins
export { openTestInbox, validateTestOptions, deadlineMargin, timeLeft, mailAttachments, seenAttachment } from './runner/test-inbox.js';
export type { MailroomTestOptions, TestRunnerBridge, TestInbox, ReportAttachment, TestTimeoutState } from './runner/test-inbox.js';

// Errors
export { MailroomError, MailroomApiError, MailroomNetworkError, isTransient } from './client/errors.js';
export { MailTimeoutError, UnexpectedMailError } from './inbox/wait-errors.js';
export type { WaitFailure, UnexpectedMailDetails, SkippedMail, SkipReason } from './inbox/wait-errors.js';

// The HTTP client
export { MailroomClient } from './client/client.js';
export type { ClientOptions, CallOptions, ListOptions, MailboxListing, WaitForMailOptions, WaitListing } from './client/client.js';
export type { ServiceFeatures } from './client/messages.js';

// Addresses, options, exactly-once
export { freshAddress, sanitizePrefix } from './inbox/address.js';
export type { FreshAddressOptions } from './inbox/address.js';
export { resolveConnection, DEFAULT_TIMEOUT_MS, DEFAULT_QUIET_MS } from './inbox/inbox-options.js';
export { DEFAULT_API_URL, DEFAULT_DOMAIN } from './contract/defaults.js';
export type { ConnectionOptions, ResolvedConnection } from './inbox/inbox-options.js';
export { createHandledStore, openHandledStore } from './inbox/handled.js';
export type { HandledStore } from './inbox/handled.js';

// The schedule and injected time, for tests and tools
export { scheduleStep, scheduleDelay } from './wait/schedule.js';
export { LIST_INTERVAL_MS } from './contract/limits.js';
export { systemClock } from './wait/clock.js';
export type { Clock, RandomSource } from './wait/clock.js';
