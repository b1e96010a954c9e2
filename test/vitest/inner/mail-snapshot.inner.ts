// A mail snapshot in a file of its own (mails/confirm-your-email.txt),
// run as a child process by test/vitest/failure-output.test.ts, which reads
// what Vitest prints. The demo app's confirmation mail to a new address,
// with a new code and link token, matches the file; the same mail with its
// subject or its link changed fails it, and the failure is the diff a
// reviewer reads. The outer run passes CI=1, so a mismatch never rewrites
// the file; to write it afresh, run this file alone with `-u -t matches`.
import { describe } from 'vitest';
import { expect, test } from '../../../src/vitest/index.js';
import { demoAppURL, sendConfirmation, signup } from './acme.js';

const SNAPSHOT = './mails/confirm-your-email.txt';
// The demo app runs on a free port: its origin is a per-run value too.
const snapshotOf = (mail: { snapshot(options?: object): string }) => mail.snapshot({ masks: { 'app url': demoAppURL() } });

// One after the other: Vitest names a file snapshot's key (in the failure
// text) after the test that last touched the file, so concurrent tests
// would print each other's names.
describe('mail snapshot', () => {
  test('matches: another address, code and token', async ({ inbox }) => {
    await signup(inbox.address);
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    await expect(snapshotOf(mail)).toMatchFileSnapshot(SNAPSHOT);
  });

  test('a changed subject fails', async ({ inbox }) => {
    await sendConfirmation(inbox.address, (mail) => ({ ...mail, subject: 'Confirm your e-mail' }));
    const mail = await inbox.expectMail({ subject: 'Confirm your e-mail' });
    await expect(snapshotOf(mail)).toMatchFileSnapshot(SNAPSHOT);
  });

  test('a changed link fails', async ({ inbox }) => {
    await sendConfirmation(inbox.address, (mail) => ({ ...mail, html: mail.html?.replace('/confirm?token=', '/confirm-email?token=') }));
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    await expect(snapshotOf(mail)).toMatchFileSnapshot(SNAPSHOT);
  });
});
