// `useInbox()` for Jest: a fresh inbox for each test of the file or
// `describe` that calls it. Jest has no fixtures, so the inbox's life is two
// hooks: a `beforeEach` that opens it (its watermark read before the test
// body, and before any `beforeEach` declared after the call) and an
// `afterEach` that closes it. Everything an inbox does around a test (the
// deadline cut, attachments, teardown) lives in the core's openTestInbox;
// this file only translates what Jest tells of its test into the core's
// TestRunnerBridge.
//
// Why a function the test file calls, not a setup file: only the tests that
// ask for an inbox pay for one (a setup file would open one for every test
// of the project), the options sit beside the tests they apply to, and
// nothing needs to be added to the Jest config.
import { relative } from 'node:path';
import { afterEach, beforeEach, expect } from '@jest/globals';
import type { Inbox } from '../inbox/inbox.js';
import { timeLeft } from '../runner/deadlines.js';
import type { ReportAttachment } from '../runner/report.js';
import { openTestInbox, type TestInbox, type TestRunnerBridge } from '../runner/test-inbox.js';
import { layerTestOptions, type MailroomTestOptions } from '../runner/test-options.js';
import { testHasFailed, testNames, testTimeout } from './circus-state.js';

/**
 * Opens a fresh inbox before each test of the file (or of the `describe`
 * it is called in) and deletes it after. Returns a function that gives the
 * running test's inbox:
 *
 * ```ts
 * const inbox = useInbox({ timeout: 10_000 });
 * test('signup', async () => {
 *   await signup(inbox().address);
 *   await expect(inbox()).toReceiveMail({ subject: 'Welcome' });
 * });
 * ```
 *
 * `options` are layered over the `MAILROOM_*` environment variables (a
 * `globalSetup` that starts the server sets `MAILROOM_API_URL`), key by
 * key; a misspelt key fails the file when it is loaded.
 */
export function useInbox(options?: MailroomTestOptions): () => Inbox {
  const settings = layerTestOptions(options);
  let open: { readonly test: TestInbox; readonly report: ReportAttachment[]; readonly titlePath: string; ended: boolean } | undefined;

  beforeEach(async () => {
    const names = testNames();
    const { currentTestName, testPath } = expect.getState();
    const title = names.at(-1) ?? currentTestName ?? 'test';
    const titlePath = `${testPath ? relative(process.cwd(), testPath) : 'a Jest test'} > ${names.length > 0 ? names.join(' > ') : title}`;
    const report: ReportAttachment[] = [];
    // Jest starts the body's clock after the beforeEach hooks; the end of
    // this one is the closest mailroom sees, a little early, so a wait is
    // cut a little sooner than it must, never later.
    const state: { ended: boolean; bodyStartedAt?: number } = { ended: false };
    const bridge: TestRunnerBridge = {
      title,
      titlePath,
      runnerName: 'Jest',
      // Jest has no report steps; the wait's title is in its failure text.
      step: (_title, run) => run(),
      // Jest has no attachments: kept, and printed if the test fails (below).
      attach: (attachment) => void report.push(attachment),
      // Jest has no annotations; the core prints every note to stderr.
      annotate: () => undefined,
      timeLeft: () =>
        state.bodyStartedAt === undefined
          ? undefined
          : timeLeft({ timeoutMs: testTimeout(), startedAt: state.bodyStartedAt, now: performance.now(), bodyFinished: state.ended }),
    };
    open = Object.assign(state, { test: await openTestInbox(settings, bridge), report, titlePath });
    state.bodyStartedAt = performance.now();
  });

  afterEach(async () => {
    const current = open;
    open = undefined;
    if (current === undefined) return;
    current.ended = true;
    const failed = testHasFailed();
    await current.test.close({ failed: failed === true });
    if (failed === true) printReport(current.titlePath, current.test.inbox.address, current.report);
  });

  return () => {
    if (open === undefined) {
      throw new Error(
        'useInbox(): there is no inbox outside a test. Call the function useInbox() returned inside a test, or in a beforeEach or afterEach declared after useInbox(); not in test.concurrent, whose tests Jest runs without their beforeEach hooks (use test).',
      );
    }
    return open.test.inbox;
  };
}

/**
 * A failed test's mail, where Jest users look: the console output Jest
 * prints above the test file's results. Text documents in full (each mail's
 * text, what a failed wait saw, SMTP and webhook timelines); HTML by name
 * only, since its text is beside it. `console.info`, not `console.error`:
 * Jest prints a code frame of the call under an error, here a frame of
 * mailroom's own file, which says nothing about the test.
 */
function printReport(titlePath: string, address: string, report: readonly ReportAttachment[]): void {
  if (report.length === 0) return;
  const parts = report.map((attachment) =>
    attachment.contentType === 'text/plain'
      ? `--- ${attachment.name} ---\n${attachment.body.trimEnd()}`
      : `--- ${attachment.name} (${attachment.contentType}, ${attachment.body.length} characters, not printed) ---`,
  );
  console.info(`mailroom: the mail of the failed test ${titlePath} (${address}):\n\n${parts.join('\n\n')}`);
}
