// Deliberately failing tests (and two passing ones), run as a child process
// by test/vitest/failure-output.test.ts, which asserts on what this run
// prints. Each test is a way a mail test goes wrong in real life.
import nodemailer from 'nodemailer';
import { request } from 'undici';
import { describe } from 'vitest';
import { expect, test } from '../../../src/vitest/index.js';
import { signup } from './acme.js';

describe.concurrent('deliberately failing', () => {
  describe('kept on failure', () => {
    test.override({ mailroom: { keepOnFailure: true } });

    test('waits for an invoice that never comes', async ({ inbox }) => {
      await signup(inbox.address);
      await expect(inbox).toReceiveMail({ subject: 'Invoice' }, { timeout: 4_000 });
    });
  });

  test('expects no welcome mail, but one comes', async ({ inbox }) => {
    await signup(inbox.address);
    await expect(inbox).not.toReceiveMail({ subject: 'Welcome' }, { within: 5_000 });
  });

  // The mail budget (30 s by default) is longer than the test's 6 s: the
  // wait ends first, with its own message instead of Vitest's "Test timed out".
  test('has a shorter timeout than the mail budget', { timeout: 6_000 }, async ({ inbox }) => {
    await inbox.expectMail({ subject: 'Never' });
  });

  describe('with a misspelt option', () => {
    test.override({ mailroom: { timout: 5_000 } as never });

    test('fails in setup, naming the option', async ({ inbox }) => {
      await inbox.expectMail();
    });
  });

  // The test sends the mail itself, retrying at once, as a careless app would.
  test('hammers a deferring server', async ({ inbox }) => {
    await inbox.smtp.defer({ times: 2 });
    for (let i = 0; i < 3; i++) {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: Number(process.env.MAILROOM_INNER_SMTP_PORT), secure: false, ignoreTLS: true });
      await transport.sendMail({ from: 'careless@app.example', to: inbox.address, subject: 'Your code', text: '123456' }).catch(() => undefined);
      transport.close();
    }
    await expect(inbox).toHaveBackedOff();
  });

  // Each wait and matcher here fails on a line of its own: the outer test
  // finds the line in this file and checks that the report points at it.
  test('expects no welcome mail with expectNoMail', async ({ inbox }) => {
    await signup(inbox.address);
    await inbox.expectNoMail({ subject: 'Welcome' }, { within: 5_000 });
  });

  test('checks a mail whose HTML Gmail clips', async () => {
    await expect({ subject: 'Newsletter', html: '<p>Hello there</p>', text: 'Hello there', size: 200 }).toPassMailChecks({
      only: ['size'],
      size: { clipBytes: 10 },
    });
  });

  test('passes, and its mailbox is deleted', async ({ inbox }) => {
    await signup(inbox.address);
    await inbox.expectMail({ subject: 'Confirm your email' });
    // The app sends the welcome right after the confirmation, one mail at a
    // time; had it arrived after teardown, it would make a new mailbox.
    await inbox.expectMail({ subject: 'Welcome to Acme' });
  });

  test('passes, though deleting its mailbox fails', async ({ inbox }) => {
    // Every call for this address from now on answers 503, teardown's delete too.
    const faults = await request(`${process.env.MAILROOM_API_URL}/_mailroom/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: inbox.address, route: 'any', times: 1_000, fault: { kind: 'status', status: 503 } }),
    });
    await faults.body.dump();
    expect(faults.statusCode).toBe(200);
  });
});
