// `toPassMailChecks` for Playwright: the core's matcher (runner/mail-checks-matcher.ts)
// with this adapter's two additions: the accessibility check, run in the
// browser the `inbox` fixtures launch for mail pictures (so a test that never
// checks a mail never launches one), and the report attached to the test's
// report beside the mail.
import { test, type Browser, type ExpectMatcherState, type MatcherReturnType, type TestInfo } from '@playwright/test';
import { mailChecksAttachment, mailChecksFailure, matchMailChecks, type CheckedMail, type PassMailChecksOptions } from '../runner/mail-checks-matcher.js';
import { accessibilityCheck } from './accessibility-check.js';

/** Options of `toPassMailChecks`: the checks' options (`only`, `skip`, `links`, `html`, `size`) and `failOn`. */
export type ToPassMailChecksOptions = PassMailChecksOptions;

// Set by the fixtures for each test: the browser to check accessibility in.
const browsers = new WeakMap<TestInfo, () => Promise<Browser>>();

/** Called by the fixtures around each test (fixtures.ts). */
export function offerBrowser(testInfo: TestInfo, browser: () => Promise<Browser>): () => void {
  browsers.set(testInfo, browser);
  return () => browsers.delete(testInfo);
}

export async function toPassMailChecks(this: ExpectMatcherState, received: CheckedMail, options?: ToPassMailChecksOptions): Promise<MatcherReturnType> {
  const testInfo = currentTestInfo();
  const browser = testInfo && browsers.get(testInfo);
  const result = await matchMailChecks(received, options, { isNot: this.isNot, extraChecks: browser ? [accessibilityCheck(browser)] : [] });
  if (testInfo) {
    const { name, contentType, body } = mailChecksAttachment(received, result.report);
    await testInfo.attach(name, { contentType, body });
  }
  return { pass: result.pass, name: result.name, expected: result.expected, actual: result.actual, message: () => mailChecksFailure(this, options, result) };
}

/** The running test's info; none when the matcher runs outside a test (a script using this `expect`). */
function currentTestInfo(): TestInfo | undefined {
  try {
    return test.info();
  } catch {
    return undefined;
  }
}
