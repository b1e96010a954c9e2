// `mailroom/runner`: for authors of test-runner plugins. A plugin translates
// its runner's test info into a `TestRunnerBridge` and hands it to
// `openTestInbox`, and registers `matchReceiveMail` as its matcher; the life
// of a test's inbox and every word of the failure text live here, so a plugin
// stays near 150 lines and reads the same as the built-in ones.
export { openTestInbox, validateTestOptions, timeLeft } from './test-inbox.js';
export type { MailroomTestOptions, TestRunnerBridge, TestInbox, ReportAttachment, TestTimeoutState } from './test-inbox.js';
export { matchReceiveMail } from './matcher.js';
export type { ReceiveMailOptions, ReceiveMailResult } from './matcher.js';
export { describeWait } from '../inbox/describe.js';
export type { DescribeWaitOptions, WaitKind } from '../inbox/describe.js';
