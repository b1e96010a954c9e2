// Mail snapshots with Playwright's own toMatchSnapshot, started by
// e2e/mail-snapshot.spec.ts with --update-snapshots=none, which reads what
// each test printed. The demo app's confirmation mail to a new address,
// with a new code and link token, matches the stored text (from the app
// sending over SMTP, and from the app sending through Resend's SDK, its
// provider id masked); the same mail with its subject or its link changed
// fails it, and the failure is the diff a reviewer reads. The stored files
// are under __snapshots__/mail-snapshot.inner.ts/ (the inner config's
// snapshotPathTemplate, with no platform in the name: a mail's text is the
// same on every OS).
import { randomBytes, randomInt } from 'node:crypto';
import { createTransport } from 'nodemailer';
import type { APIRequestContext } from '@playwright/test';
import { test, expect } from 'mailroomjs/playwright';
import { confirmationMail, FROM, type OutgoingMail } from '../../fixtures/demo-app/mails.js';
import { APP_URL, RESEND_APP_PORT, SMTP_PORT } from '../servers.js';

const RESEND_APP_URL = `http://127.0.0.1:${RESEND_APP_PORT}`;
// A failed test here fails on purpose: no picture of its mail, so no browser.
test.use({ mailroom: { screenshots: 'off' } });

async function signup(request: APIRequestContext, app: string, email: string): Promise<void> {
  const answer = await request.post(`${app}/api/signup`, { data: { email } });
  expect(answer.status()).toBe(202);
}

/** The app's confirmation mail (a new token and code), changed as a change to the app would change it, sent over SMTP. */
async function sendChanged(email: string, change: (mail: OutgoingMail) => OutgoingMail): Promise<void> {
  const mail = change(
    confirmationMail({ email, token: randomBytes(16).toString('hex'), code: String(randomInt(100_000, 1_000_000)), confirmed: false }, APP_URL),
  );
  const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: FROM, ...mail });
  } finally {
    transport.close();
  }
}

// The demo apps' ports can be moved (e2e/servers.ts): their origin is a per-run value too.
const masked = (mail: { snapshot(options?: object): string }, app: string) => mail.snapshot({ masks: { 'app url': app } });

test('matches: another address, code and token', async ({ inbox, request }) => {
  await signup(request, APP_URL, inbox.address);
  const mail = await inbox.expectMail({ subject: 'Confirm your email' });
  expect(masked(mail, APP_URL)).toMatchSnapshot('confirm-your-email.txt');
});

test('matches through Resend: another provider id too', async ({ inbox, request }) => {
  await signup(request, RESEND_APP_URL, inbox.address);
  const mail = await inbox.expectMail({ subject: 'Confirm your email' });
  expect(mail.provider?.name).toBe('resend');
  expect(masked(mail, RESEND_APP_URL)).toMatchSnapshot('confirm-your-email-resend.txt');
});

test('a changed subject fails', async ({ inbox }) => {
  await sendChanged(inbox.address, (mail) => ({ ...mail, subject: 'Confirm your e-mail' }));
  const mail = await inbox.expectMail({ subject: 'Confirm your e-mail' });
  expect(masked(mail, APP_URL)).toMatchSnapshot('confirm-your-email.txt');
});

test('a changed link fails', async ({ inbox }) => {
  await sendChanged(inbox.address, (mail) => ({ ...mail, html: mail.html?.replace('/confirm?token=', '/confirm-email?token=') }));
  const mail = await inbox.expectMail({ subject: 'Confirm your email' });
  expect(masked(mail, APP_URL)).toMatchSnapshot('confirm-your-email.txt');
});
