// A retried test gets a fresh address, and so does every repetition of
// --repeat-each, across two workers: the inner run's first attempts fail on
// purpose, every attempt prints its address.
import { test, expect } from '@playwright/test';
import { printedAddresses, sharedInnerRun } from './support/inner-run.js';

test('every attempt and every repetition gets its own address', async ({}, testInfo) => {
  // Run with --retries=1 --repeat-each=3 (e2e/inner/playwright.config.ts, project `retries`).
  const run = await sharedInnerRun('retries.inner.ts', testInfo);
  expect(run.stats, run.output).toEqual({ expected: 0, unexpected: 0, flaky: 3, skipped: 0 });

  const attempts = run.results.map((r) => ({ retry: r.result.retry, status: r.result.status, address: printedAddresses(r)[0] }));
  expect(attempts.map((a) => [a.retry, a.status]).sort()).toEqual([
    [0, 'failed'],
    [0, 'failed'],
    [0, 'failed'],
    [1, 'passed'],
    [1, 'passed'],
    [1, 'passed'],
  ]);
  const addresses = attempts.map((a) => a.address);
  for (const address of addresses) expect(address).toMatch(/^fails-once-then-passes-[a-z2-7]{16}@mailroom\.test$/);
  expect(new Set(addresses).size).toBe(6);
});
