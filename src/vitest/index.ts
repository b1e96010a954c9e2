// mailroom/vitest: the `inbox` fixture and the `toReceiveMail` matcher for
// Vitest 4. A thin adapter: the life of a test's inbox (prefix, watermark,
// deadline cap, attachments, teardown) is `openTestInbox`, and the matcher
// is `matchReceiveMail`; this file only translates Vitest's test context into
// a `TestRunnerBridge` and registers the matcher.
import { expect, inject, test as base, type MatcherState, type TestAPI, type TestContext } from 'vitest';
import type { MailFilter } from '../inbox/filter.js';
import type { Inbox } from '../inbox/inbox.js';
import { matchReceiveMail, type ReceiveMailOptions } from '../runner/matcher.js';
import { openTestInbox, timeLeft, validateTestOptions, type MailroomTestOptions, type TestRunnerBridge } from '../runner/test-inbox.js';

export type { MailroomTestOptions } from '../runner/test-inbox.js';
export type { ReceiveMailOptions } from '../runner/matcher.js';
export type { Inbox } from '../inbox/inbox.js';
export type { Mail } from '../inbox/mail.js';
export type { MailFilter, TextMatcher } from '../inbox/filter.js';

/** The fixtures `test` adds to Vitest's test context. */
export interface MailroomFixtures {
  /**
   * Options of this test's inbox: the closest `test.override({ mailroom })`
   * of its file or `describe`, else the value provided under `mailroom`
   * (config `provide`, or `project.provide` in a global setup). The inbox
   * layers them key by key, later wins: the `MAILROOM_*` environment
   * variables, the provided value, the override.
   */
  mailroom: MailroomTestOptions;
  /** A fresh inbox for this test, its watermark read before the test body runs. */
  inbox: Inbox;
}

/** The annotation type of everything mailroom adds to a test's report. */
export const ANNOTATION_TYPE = 'mailroom';

/** Vitest's `test` with the `mailroom` option and the `inbox` fixture. */
export const test: TestAPI<MailroomFixtures> = base.extend<MailroomFixtures>({
  // `injected`: a value provided under `mailroom` replaces this default.
  mailroom: [{}, { injected: true }],
  // Vitest reads the fixtures a function needs from its parameter list, so
  // the context is destructured here rather than passed whole.
  inbox: async ({ mailroom, task, signal, annotate }, use) => {
    // The test's timeout clock starts when its fixtures start to resolve.
    const startedAt = performance.now();
    const options = validateTestOptions({ ...inject('mailroom'), ...mailroom });
    const { inbox, close } = await openTestInbox(options, vitestBridge({ task, signal, annotate }, startedAt));
    // For reporters (the JSON reporter prints `meta`): which mailbox this test used.
    task.meta.mailroom = { address: inbox.address };
    await use(inbox);
    // The result is settled before fixtures are torn down.
    await close({ failed: task.result?.state === 'fail' });
  },
});

/** The same as `test`. */
export const it: TestAPI<MailroomFixtures> = test;

type BridgeContext = Pick<TestContext, 'task' | 'signal' | 'annotate'>;

function vitestBridge({ task, signal, annotate }: BridgeContext, startedAt: number): TestRunnerBridge {
  const running = (): boolean => task.result === undefined || task.result.state === 'run';
  return {
    title: task.name,
    signal,
    // Vitest has no report steps; the wait's title is in its failure text.
    step: (_title, run) => run(),
    attach: async ({ name, contentType, body }) => {
      // Once the test has its result (a wait in afterEach), Vitest refuses
      // annotations; the wait's own failure text still tells the story.
      if (!running()) return;
      await annotate(name, ANNOTATION_TYPE, { contentType, body, bodyEncoding: 'utf-8' });
    },
    note: async (message) => {
      // Vitest refuses annotations once the test has its result, which is
      // when teardown runs; stderr is the channel left. With concurrent
      // tests Vitest may print it under another test, so it names its own.
      if (running()) {
        try {
          await annotate(message, ANNOTATION_TYPE);
          return;
        } catch {
          // The test ended in the meantime: fall through to stderr.
        }
      }
      console.warn(`${message} (test: ${fullName(task)})`);
    },
    // The body has ended once Vitest set the result (pass or fail); afterEach
    // hooks run after that, on their own hookTimeout, so the test's timeout
    // no longer cuts their waits. (An `expect.soft` failure sets `fail`
    // early too; the test has failed by then, and Vitest's own timeout
    // still bounds the rest of its body.)
    timeLeft: () => timeLeft({ timeoutMs: task.timeout, startedAt, now: performance.now(), bodyFinished: !running() }),
  };
}

function fullName(task: TestContext['task']): string {
  const names = [task.name];
  for (let suite = task.suite; suite && suite.name; suite = suite.suite) names.unshift(suite.name);
  return `${task.file.name} > ${names.join(' > ')}`;
}

/**
 * `await expect(inbox).toReceiveMail(filter?, { timeout })` waits for a new
 * matching mail; `.not.toReceiveMail(filter?, { within })` waits out a quiet
 * period. It uses no per-test state, so Vitest's global `expect` and the test
 * context's `expect` (the one to use in `test.concurrent`) both work.
 */
async function toReceiveMail(this: MatcherState, received: unknown, filter?: MailFilter, options?: ReceiveMailOptions) {
  const result = await matchReceiveMail(received, filter, options, { isNot: this.isNot });
  const hint = this.utils.matcherHint('toReceiveMail', 'inbox', 'filter', { isNot: this.isNot, promise: this.promise });
  // No `actual`/`expected`: Vitest would print them as a diff of two
  // unrelated strings; the message already names the filter and what came.
  return { pass: result.pass, message: () => `${hint}\n\n${result.message()}` };
}

expect.extend({ toReceiveMail });

export { expect };

/** Shown by the compiler when `toReceiveMail` is called on something that is not an `Inbox`. */
export interface ToReceiveMailExpectsAnInbox {
  readonly 'toReceiveMail is only for an Inbox: the `inbox` fixture or the result of createInbox()': never;
}

declare module 'vitest' {
  // The parameter must be declared as Vitest declares it (`T = any`).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  interface Matchers<T = any> {
    /**
     * Waits for a new mail matching `filter` (any mail when omitted) at
     * the inbox; with `.not`, waits out `within` ms (5 s) and fails if one
     * arrives. The budget defaults to the `mailroom.timeout` option (30 s),
     * and is cut short before the test's own timeout.
     */
    toReceiveMail: [T] extends [Inbox] ? (filter?: MailFilter, options?: ReceiveMailOptions) => Promise<void> : ToReceiveMailExpectsAnInbox;
  }
  interface TaskMeta {
    /** Set by the `inbox` fixture. */
    mailroom?: { readonly address: string };
  }
  interface ProvidedContext {
    /** Options for every `inbox` fixture, e.g. `project.provide('mailroom', { apiURL })` in a global setup. */
    mailroom?: MailroomTestOptions;
  }
}
