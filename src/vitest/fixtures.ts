// The `mailroom` option and the `inbox` fixture for Vitest 4. Everything an
// inbox does around a test (attachments, the deadline cap, teardown) lives in
// the core's openTestInbox; this file only translates Vitest's test context
// into the core's TestRunnerBridge.
import { inject, test as base, type TestAPI, type TestContext } from 'vitest';
import type { Inbox } from '../inbox/inbox.js';
import { timeLeft } from '../runner/deadlines.js';
import { ANNOTATION_TYPE } from '../runner/report.js';
import { openTestInbox, type TestRunnerBridge } from '../runner/test-inbox.js';
import { layerTestOptions, type MailroomTestOptions } from '../runner/test-options.js';

/** The option fixture, set with `test.override({ mailroom })` or provided under `mailroom`. */
export interface MailroomOptions {
  /**
   * Options of this test's inbox: the closest `test.override({ mailroom })`
   * of its file or `describe`, else the value provided under `mailroom`
   * (config `provide`, or `project.provide` in a global setup). The inbox
   * layers them key by key, later wins: the `MAILROOM_*` environment
   * variables, the provided value, the override.
   */
  mailroom: MailroomTestOptions;
}

/** The test-scoped fixtures. */
export interface MailroomFixtures {
  /** A fresh inbox for this test, its watermark read before the test body runs. */
  inbox: Inbox;
}

/** Vitest's `test` with the `mailroom` option and the `inbox` fixture. */
export const test: TestAPI<MailroomFixtures & MailroomOptions> = base.extend<MailroomFixtures & MailroomOptions>({
  // `injected`: a value provided under `mailroom` replaces this default.
  mailroom: [{}, { injected: true }],
  // Vitest reads the fixtures a function needs from its parameter list, so
  // the context is destructured here rather than passed whole.
  inbox: async ({ mailroom, task, signal, annotate }, use) => {
    // The test's timeout clock starts when its fixtures start to resolve.
    const startedAt = performance.now();
    const options = layerTestOptions(inject('mailroom'), mailroom);
    const { inbox, close } = await openTestInbox(options, vitestBridge({ task, signal, annotate }, startedAt));
    // For reporters (the JSON reporter prints `meta`): which mailbox this test used.
    task.meta.mailroom = { address: inbox.address };
    await use(inbox);
    // The result is settled before fixtures are torn down.
    await close({ failed: task.result?.state === 'fail' });
  },
});

/** The same as `test`. */
export const it: TestAPI<MailroomFixtures & MailroomOptions> = test;

type BridgeContext = Pick<TestContext, 'task' | 'signal' | 'annotate'>;

function vitestBridge({ task, signal, annotate }: BridgeContext, startedAt: number): TestRunnerBridge {
  // Once the test has its result (a wait in afterEach, the teardown),
  // Vitest refuses annotations; the core's note is on stderr as well.
  const running = (): boolean => task.result === undefined || task.result.state === 'run';
  return {
    title: task.name,
    runnerName: 'Vitest',
    titlePath: titlePath(task),
    signal,
    // Vitest has no report steps; the wait's title is in its failure text.
    step: (_title, run) => run(),
    attach: async ({ name, contentType, body }) => {
      if (running()) await annotate(name, ANNOTATION_TYPE, { contentType, body, bodyEncoding: 'utf-8' });
    },
    annotate: async (message) => {
      if (running()) await annotate(message, ANNOTATION_TYPE);
    },
    // The body has ended once Vitest set the result (pass or fail); afterEach
    // hooks run after that, on their own hookTimeout, so the test's timeout
    // no longer cuts their waits. (An `expect.soft` failure sets `fail`
    // early too; the test has failed by then, and Vitest's own timeout
    // still bounds the rest of its body.)
    timeLeft: () => timeLeft({ timeoutMs: task.timeout, startedAt, now: performance.now(), bodyFinished: !running() }),
  };
}

/** `test/signup.test.ts > signup > sends a code`, as Vitest prints a test's name. */
function titlePath(task: TestContext['task']): string {
  const names = [task.name];
  for (let suite = task.suite; suite && suite.name; suite = suite.suite) names.unshift(suite.name);
  return `${task.file.name} > ${names.join(' > ')}`;
}
