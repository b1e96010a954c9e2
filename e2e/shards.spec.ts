// Two shards of one suite at the same time, as two child processes against
// ONE mailroom server: every test gets its own address (the same readable
// prefix, different random bits) and finds exactly its own mail.
import { test, expect } from '@playwright/test';
import { printedAddresses, runInner } from './support/inner-run.js';
import { subjectsAt } from './support/mailbox.js';

test("two shards running at once do not see each other's mail", async () => {
  test.setTimeout(240_000);
  const [first, second] = await Promise.all([
    runInner(['shards.inner.ts', '--shard=1/2', '--workers=1']),
    runInner(['shards.inner.ts', '--shard=2/2', '--workers=1']),
  ]);
  for (const run of [first, second]) {
    expect(run.code, run.output).toBe(0);
    expect(
      run.results.every((r) => r.result.status === 'passed'),
      run.output,
    ).toBe(true);
  }
  // Each shard ran its half; together, every test once.
  const titles = (run: typeof first) => run.results.map((r) => r.title);
  expect(titles(first)).toHaveLength(3);
  expect(titles(second)).toHaveLength(3);
  expect([...titles(first), ...titles(second)].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f'].map((g) => `${g} › signs up`));
  // The two runs overlapped in time.
  const span = (run: typeof first) => [Date.parse(run.report.stats.startTime), Date.parse(run.report.stats.startTime) + run.report.stats.duration] as const;
  expect(span(first)[0]).toBeLessThan(span(second)[1]);
  expect(span(second)[0]).toBeLessThan(span(first)[1]);

  const addresses = [...first.results, ...second.results].flatMap(printedAddresses);
  expect(addresses).toHaveLength(6);
  expect(new Set(addresses).size).toBe(6);
  for (const address of addresses) expect(address).toMatch(/^signs-up-[a-z2-7]{16}@mailroom\.test$/);

  // Each wait was a step titled like a sentence, naming the test's own address.
  for (const r of [...first.results, ...second.results]) {
    const [address] = printedAddresses(r);
    expect(r.result.steps?.map((s) => s.title)).toContain(`Wait for mail to ${address} with subject ~ "Confirm"`);
  }
  // And every mailbox was deleted when its test passed.
  for (const address of addresses) expect(await subjectsAt(address)).toEqual([]);
});
