// The Acme demo app as the inner suites reach it: a signup over its JSON
// API (it sends "Confirm your email" and "Welcome to Acme"), and its
// confirmation mail sent straight over SMTP, changed as a change to the app
// would change it. The outer run hands over where both servers are.
import { randomBytes, randomInt } from 'node:crypto';
import nodemailer from 'nodemailer';
import { request } from 'undici';
import { confirmationMail, FROM, type OutgoingMail } from '../../../fixtures/demo-app/mails.js';

/** The demo app's URL, from DEMO_APP_URL. */
export function demoAppURL(): string {
  const app = process.env.DEMO_APP_URL;
  if (!app) throw new Error('Set DEMO_APP_URL to the demo app');
  return app;
}

export async function signup(email: string): Promise<void> {
  const res = await request(new URL('/api/signup', demoAppURL()), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  await res.body.dump();
  if (res.statusCode !== 202) throw new Error(`signup answered ${res.statusCode}`);
}

/** The app's confirmation mail to `email` (a new token and code), through `change` first, sent over SMTP to the outer run's server. */
export async function sendConfirmation(email: string, change: (mail: OutgoingMail) => OutgoingMail): Promise<void> {
  const mail = change(
    confirmationMail({ email, token: randomBytes(16).toString('hex'), code: String(randomInt(100_000, 1_000_000)), confirmed: false }, demoAppURL()),
  );
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: Number(process.env.MAILROOM_INNER_SMTP_PORT), secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: FROM, ...mail });
  } finally {
    transport.close();
  }
}
