// `mailroomjs/runner`: for authors of test-runner plugins. A plugin translates
// its runner's test info into a `TestRunnerBridge` and hands it to
// `openTestInbox`, and registers `matchReceiveMail` as its matcher; the life
// of a test's inbox and every word of the failure text live here, so a plugin
// stays near 150 lines and reads the same as the built-in ones.
export { openTestInbox } from './test-inbox.js';
export { timeLeft } from './deadlines.js';
export { layerTestOptions, validateTestOptions } from './test-options.js';
export type { TestRunnerBridge, TestInbox } from './test-inbox.js';
export type { ReportAttachment } from './report.js';
export type { TestTimeoutState } from './deadlines.js';
export type { MailroomTestOptions } from './test-options.js';
export { matchReceiveMail, receiveMailFailure } from './matcher.js';
export type { ReceiveMailOptions, ReceiveMailResult, MatcherHintState } from './matcher.js';
export { matchRetried, matchBackedOff, smtpMatcherFailure, missteps } from './smtp-matchers.js';
export type { RetriedOptions, BackedOffOptions, SmtpMatcherResult, SmtpMatcherName, Misstep, BackoffPolicy } from './smtp-matchers.js';
export { readLog } from '../contract/attempt-reading.js';
export type { ReadLog, Delivery, DeliveryState, TimelineEntry } from '../contract/attempt-reading.js';
export { formatTimeline } from '../contract/attempt-timeline.js';
export { matchDelivered, matchDeadLettered, webhookMatcherFailure } from './webhook-matchers.js';
export type { DeliveredOptions, DeadLetteredOptions, WebhookMatcherResult, WebhookMatcherName } from './webhook-matchers.js';
export { formatWebhookTimeline } from './webhook-timeline.js';
export { matchMailChecks, mailChecksFailure, mailChecksAttachment } from './mail-checks-matcher.js';
export type { PassMailChecksOptions, MailChecksMatcherResult, CheckedMail } from './mail-checks-matcher.js';
export { ANNOTATION_TYPE } from './report.js';
export { describeWait } from '../inbox/describe.js';
export type { DescribeWaitOptions, WaitKind } from '../inbox/describe.js';
