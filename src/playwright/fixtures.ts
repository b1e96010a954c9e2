// The `mailroom` option and the `inbox` fixture. Everything an inbox does
// around a test (steps, attachments, the deadline cap, teardown) lives in
// the core's openTestInbox; this file only translates Playwright's TestInfo
// into the core's TestRunnerBridge.
import { rm, writeFile } from 'node:fs/promises';
import {
  test as base,
  type Browser,
  type Fixtures,
  type PlaywrightTestArgs,
  type PlaywrightTestOptions,
  type PlaywrightWorkerArgs,
  type PlaywrightWorkerOptions,
  type TestInfo,
} from '@playwright/test';
import { offerBrowser } from './mail-checks.js';
import { mailPicture } from './mail-picture.js';
import type { Inbox } from '../inbox/inbox.js';
import { timeLeft } from '../runner/deadlines.js';
import { ANNOTATION_TYPE } from '../runner/report.js';
import { openTestInbox, type TestRunnerBridge } from '../runner/test-inbox.js';
import { layerTestOptions, type MailroomTestOptions } from '../runner/test-options.js';

/** The option fixture, set in the config's `use` or with `test.use`. */
export interface MailroomOptions {
  /**
   * Where the mail server is and how waits behave. `test.use({ mailroom })`
   * in a file or `describe` changes only the keys it names: the inbox layers
   * it over the config's value key by key. Keys neither sets fall back to
   * the `MAILROOM_*` environment variables, then to the embedded server's
   * defaults (`http://127.0.0.1:8025`, `mailroom.test`, 30 s).
   */
  mailroom: MailroomTestOptions;
}

/** The test-scoped fixtures. */
export interface MailroomFixtures {
  /** A fresh address for this test, its watermark read before the test body runs. */
  inbox: Inbox;
}

/** Time left before Playwright's own timeouts; private, so not in the public types. */
interface MailroomPrivateFixtures {
  _mailroomTimeLeft: Pick<TestRunnerBridge, 'timeLeft' | 'teardownTimeLeft'>;
}

/** Hands `toPassMailChecks` the browser for its accessibility check; private. */
interface MailroomPrivateCheckFixtures {
  _mailroomChecks: void;
}

/** The browser that renders mail for the `screenshots` option and is checked for accessibility in, launched on first use; private. */
interface MailroomPrivateWorkerFixtures {
  _mailroomPictureBrowser: () => Promise<Browser>;
}

const fixtures: Fixtures<
  MailroomFixtures & MailroomOptions & MailroomPrivateFixtures & MailroomPrivateCheckFixtures,
  MailroomPrivateWorkerFixtures,
  PlaywrightTestArgs & PlaywrightTestOptions,
  PlaywrightWorkerArgs & PlaywrightWorkerOptions
> = {
  // Declared the way Playwright declares its own options. The empty default
  // lets the core resolve the environment and built-in defaults, in one place.
  mailroom: [{}, { option: true, box: true }],

  // Auto, so it is set up before the test's other fixtures (page, context…)
  // and its clock starts about where Playwright's test timeout does.
  _mailroomTimeLeft: [
    async ({}, use, testInfo) => {
      const startedAt = performance.now();
      await use({ timeLeft: timeLeftClock(testInfo, startedAt), teardownTimeLeft: teardownTimeLeftClock(testInfo, startedAt) });
    },
    { auto: true, box: true },
  ],

  // A browser of its own, launched only when a picture is taken (a failed
  // test, by default), as the project configures its browser: a suite whose
  // tests never open a page, or never fail, never launches one for this.
  _mailroomPictureBrowser: [
    async ({ playwright, browserName, launchOptions, connectOptions }, use) => {
      let launched: Promise<Browser> | undefined;
      await use(() => {
        const type = playwright[browserName];
        launched ??= connectOptions ? type.connect(connectOptions.wsEndpoint, connectOptions) : type.launch(launchOptions);
        return launched;
      });
      if (launched) await (await launched).close();
    },
    { scope: 'worker', box: true },
  ],

  // Auto, so `expect(mail).toPassMailChecks()` has a browser for its
  // accessibility check in every test; the browser is launched only when a
  // check asks for it (the one that renders mail pictures).
  _mailroomChecks: [
    async ({ _mailroomPictureBrowser }, use, testInfo) => {
      const withdraw = offerBrowser(testInfo, _mailroomPictureBrowser);
      await use();
      withdraw();
    },
    { auto: true, box: true },
  ],

  inbox: async ({ mailroom, _mailroomTimeLeft, _mailroomPictureBrowser }, use, testInfo) => {
    // `test.use({ mailroom })` replaces the option whole, as Playwright does
    // with every object option; layered over the project's value (the
    // config's `use`), the keys it leaves out keep the config's values.
    const configured = (testInfo.project.use as Partial<MailroomOptions>).mailroom;
    let pictures = 0;
    const bridge: TestRunnerBridge = {
      ...bridgeFor(testInfo, _mailroomTimeLeft),
      // A file, not a body: the line and list reporters print a file's path
      // under a failed test (and skip a binary body), so a CI log says where
      // the picture is. Playwright copies it into the test's attachments.
      attachPicture: async (mail, name) => {
        const file = testInfo.outputPath(`mailroom-picture-${++pictures}.png`);
        await writeFile(file, await mailPicture(await _mailroomPictureBrowser(), mail));
        await testInfo.attach(name, { contentType: 'image/png', path: file });
        await rm(file, { force: true });
      },
    };
    const { inbox, close } = await openTestInbox(layerTestOptions(configured, mailroom), bridge);
    await use(inbox);
    await close({ failed: testInfo.status !== testInfo.expectedStatus });
  },
};

/**
 * The fixtures on their own: `yourTest.extend(mailroomFixtures)`.
 * (`mergeTests(yourTest, test)` with this module's `test` works too.)
 */
export const mailroomFixtures = fixtures as Fixtures<MailroomFixtures & MailroomOptions>;

/**
 * Milliseconds left before Playwright fails the test with its own timeout.
 *
 * `testInfo.timeout` is read at every call: `test.setTimeout()` and
 * `test.slow()` change it while the test runs, and 0 means no timeout.
 * Playwright has no public clock for the time already spent, so it is
 * counted from this fixture's setup, which comes before the test's other
 * fixtures. That count is never short of Playwright's own, so a wait is
 * cut early rather than late: it also includes time Playwright does not
 * charge to the test (a worker fixture such as the browser, launched for a
 * worker's first test).
 */
export function timeLeftClock(testInfo: Pick<TestInfo, 'timeout' | 'duration'>, startedAt: number): () => number | undefined {
  // Once the body has finished (`duration` is set), afterEach hooks and
  // fixture teardown run on a separate budget of their own.
  return () => timeLeft({ timeoutMs: testInfo.timeout, startedAt, now: performance.now(), bodyFinished: testInfo.duration > 0 });
}

/**
 * Milliseconds left of the slot Playwright gives afterEach hooks and fixture
 * teardown once the body has finished: the larger of the project's and the
 * test's timeout (none if either is 0), counted from the end of the body.
 * The body's end is taken as this fixture's setup plus `duration` - never
 * later than the real end, as above - so the estimate errs early.
 */
export function teardownTimeLeftClock(
  testInfo: Pick<TestInfo, 'timeout' | 'duration'> & { readonly project: { readonly timeout: number } },
  startedAt: number,
): () => number | undefined {
  return () => {
    if (!(testInfo.duration > 0)) return undefined;
    const slot = !testInfo.timeout || !testInfo.project.timeout ? 0 : Math.max(testInfo.timeout, testInfo.project.timeout);
    return timeLeft({ timeoutMs: slot, startedAt: startedAt + testInfo.duration, now: performance.now(), bodyFinished: false });
  };
}

function bridgeFor(testInfo: TestInfo, clocks: Pick<TestRunnerBridge, 'timeLeft' | 'teardownTimeLeft'>): TestRunnerBridge {
  return {
    title: testInfo.title,
    runnerName: 'Playwright',
    titlePath: testInfo.titlePath.join(' > '),
    // At the test's line. Not boxed: Playwright takes a boxed step's frames
    // after an await of its own, where the test's line is gone, and puts
    // them in place of the error's, so the failure had no line at all. The
    // wait's error carries the test's frames itself (inbox/call-site.ts).
    step: (title, run, calledFrom) => base.step(title, run, calledFrom ? { location: calledFrom } : {}),
    attach: ({ name, contentType, body }) => testInfo.attach(name, { contentType, body }),
    annotate: (message) => void testInfo.annotations.push({ type: ANNOTATION_TYPE, description: message }),
    timeLeft: clocks.timeLeft,
    teardownTimeLeft: clocks.teardownTimeLeft,
  };
}
