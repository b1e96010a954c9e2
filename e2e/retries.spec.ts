// A retried test gets a fresh address, and so does every repetition of
// --repeat-each, across two workers: the inner run's first attempts fail on
// purpose, every attempt prints its address.
import { test, expect } from '@playwright/test';
import { printedAddresses, runInner } from './support/inner-run.js';

test('every attempt and every repetition gets its own address', async () => {
  test.setTimeout(180_000);
  const run = await runInner(['retries.inner.ts', '--retries=1', '--repeat-each=3', '--workers=2']);
  expect(run.code, run.output).toBe(0);
  expect(run.report.stats).toMatchObject({ flaky: 3, unexpected: 0 });

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
