// The inner suites that failure-output, retries and screenshots read, run
// once for the whole outer run as one child Playwright run (the `inner
// suites` project, which the `inner results` project depends on; see
// e2e/support/inner-run.ts SHARED_INNER_SUITES). Nothing is asserted here:
// the suites fail on purpose, and each reader asserts on its own part.
import { test as setup } from '@playwright/test';
import { runSharedInnerSuites } from './support/inner-run.js';

setup('run the shared inner suites', async ({}, testInfo) => {
  setup.setTimeout(240_000);
  await runSharedInnerSuites(testInfo);
});
