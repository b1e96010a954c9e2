// Mail snapshots in Vitest's own snapshot file (__snapshots__/): the demo
// app's confirmation mail, and the same mail sent through Resend's API with
// its SDK, match what was stored on an earlier run, though every run signs
// up a new address and gets a new code, link token and provider id. That
// the snapshot fails when the mail changes is the inner run's part
// (failure-output.test.ts, test/vitest/inner/mail-snapshot.inner.ts).
import { randomBytes, randomInt } from 'node:crypto';
import { Resend } from 'resend';
import { describe, inject } from 'vitest';
import { confirmationMail, FROM } from '../../fixtures/demo-app/mails.js';
import { test } from '../../src/vitest/index.js';
import { apiURL, postApp } from './support/env.js';

describe.concurrent('mail snapshots', () => {
  test("the demo app's confirmation mail matches its snapshot, whatever its address, code and token", async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    // The demo app listens on a free port, so its links' origin changes from run to run too: a mask of the test's own.
    expect(mail.snapshot({ masks: { 'app url': inject('demoAppURL') } })).toMatchSnapshot();
  });

  test('a mail sent through Resend matches through the serializer, its provider id masked', async ({ inbox, expect }) => {
    const content = confirmationMail(
      { email: inbox.address, token: randomBytes(16).toString('hex'), code: String(randomInt(100_000, 1_000_000)), confirmed: false },
      'https://acme.example',
    );
    const resend = new Resend('re_acme_demo', { baseUrl: apiURL() });
    const { error } = await resend.emails.send({ from: FROM, to: inbox.address, subject: content.subject, text: content.text, html: content.html ?? '' });
    expect(error).toBeNull();
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    expect(mail.provider?.name).toBe('resend');
    expect(mail).toMatchSnapshot();
  });
});
