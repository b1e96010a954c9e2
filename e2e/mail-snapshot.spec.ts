// Mail snapshots through Playwright's own toMatchSnapshot, in an inner run
// (e2e/inner/mail-snapshot.inner.ts, one child process for every case): the
// demo app's confirmation mail matches the stored text whatever the run's
// address, code, link token and (through Resend) provider id, and a changed
// subject or link fails with a diff of just the line that changed.
import { test, expect } from '@playwright/test';
import { runInner, type InnerRun } from './support/inner-run.js';

function errorOf(run: InnerRun, title: string): string {
  const result = run.results.find((r) => r.title === title);
  if (!result) throw new Error(`no result for "${title}" in:\n${run.output}`);
  return result.error;
}

/** The diff's own lines: what was stored (-) and what the mail is now (+), without the hunk headers. */
const changedLines = (error: string) =>
  error
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[-+](?![-+])/.test(line));

test('a mail snapshot passes for a new address and code, and fails with a readable diff for a new subject or link', async () => {
  test.setTimeout(120_000);
  // `none`: a mismatch must never rewrite the stored text, whatever the outer run was asked to update.
  const run = await runInner(['mail-snapshot.inner.ts', '--update-snapshots=none']);
  expect(run.report.stats, run.output).toMatchObject({ expected: 2, unexpected: 2 });
  expect(
    run.results
      .filter((r) => r.outcome === 'expected')
      .map((r) => r.title)
      .sort(),
  ).toEqual(['matches through Resend: another provider id too', 'matches: another address, code and token']);

  const subject = errorOf(run, 'a changed subject fails');
  expect(subject).toContain('expect(string).toMatchSnapshot(expected) failed');
  expect(subject).toMatch(
    /@@ -1,8 \+1,8 @@\n\s+From: Acme <hello@acme\.example>\n\s+To: \[address\]\n\s+-Subject: Confirm your email\n\s+\+Subject: Confirm your e-mail\n/,
  );
  expect(subject).toContain('Snapshot: confirm-your-email.txt');
  expect(changedLines(subject)).toEqual(['-Subject: Confirm your email', '+Subject: Confirm your e-mail']);

  expect(changedLines(errorOf(run, 'a changed link fails'))).toEqual([
    '-Or confirm with this link: Confirm my email <[app url]/confirm?token=[token]>',
    '+Or confirm with this link: Confirm my email <[app url]/confirm-email?token=[token]>',
  ]);
});
