// The core's public surface. Every export is listed explicitly.

// Inboxes and waits
export { createInbox, isInbox, Inbox } from './inbox.js';
export type { InboxOptions, WaitOptions, QuietOptions, WaitInfo, InboxEvent } from './inbox.js';
export type { PollEvent } from './wait.js';

// Messages
export { Mail, parseMail } from './mail.js';
export type { MailAttachment, MessageDetail, ParseMailOptions } from './mail.js';
export type { MailSummary } from './summary.js';
export { extractLinks, extractCodes } from './extract.js';

// Filters and the words for them
export { compileFilter, describeFilter } from './filter.js';
export type { MailFilter, TextMatcher, CompiledFilter } from './filter.js';
export { describeWait } from './describe.js';
export type { DescribeWaitOptions, WaitKind } from './describe.js';
export { formatSummary, formatSummaries, formatDuration } from './summary.js';

// The shared matcher for runner adapters
export { matchReceiveMail } from './matcher.js';
export type { ReceiveMailOptions, ReceiveMailResult } from './matcher.js';

// One test's inbox, for runner plugins
export { openTestInbox, validateTestOptions, deadlineMargin, timeLeft, mailAttachments, seenAttachment } from './test-inbox.js';
export type { MailroomTestOptions, TestRunnerBridge, TestInbox, ReportAttachment, TestTimeoutState } from './test-inbox.js';

// Errors
export { MailroomError, MailroomApiError, MailroomNetworkError, MailTimeoutError, UnexpectedMailError, isTransient, FATAL_SLUGS } from './errors.js';
export type { WaitFailure, UnexpectedMailDetails, SkippedMail, SkipReason } from './errors.js';

// The HTTP client
export { MailroomClient } from './client.js';
export type { ClientOptions, CallOptions, ListOptions, MailboxListing, ServiceFeatures, WaitForMailOptions, WaitListing } from './client.js';

// Addresses, options, exactly-once
export { freshAddress, sanitizePrefix } from './address.js';
export type { FreshAddressOptions } from './address.js';
export { resolveConnection, DEFAULT_API_URL, DEFAULT_DOMAIN, DEFAULT_TIMEOUT_MS, DEFAULT_QUIET_MS } from './options.js';
export type { ConnectionOptions, ResolvedConnection } from './options.js';
export { createHandledStore, openHandledStore } from './handled.js';
export type { HandledStore } from './handled.js';

// The schedule and injected time, for tests and tools
export { scheduleStep, scheduleDelay, LIST_INTERVAL_MS } from './schedule.js';
export { systemClock } from './clock.js';
export type { Clock, RandomSource } from './clock.js';
