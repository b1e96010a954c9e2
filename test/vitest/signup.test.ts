// mailroomjs/vitest as a user would use it: API-level signup tests against the
// demo app, which sends real mail over SMTP to the embedded server. The
// `inbox` fixture reaches the server through the `mailroom` value that the
// global setup provided (test/vitest/support/global-setup.ts).
import { stripVTControlCharacters } from 'node:util';
import { describe } from 'vitest';
import { expect, test } from '../../src/vitest/index.js';
import { getPage, postApp, send, stats } from './support/env.js';

/** The failure text of an assertion that must fail, without the colours of the matcher hint. */
async function failureText(assertion: Promise<unknown>): Promise<string> {
  try {
    await assertion;
  } catch (error) {
    return stripVTControlCharacters(error instanceof Error ? error.message : String(error));
  }
  throw new Error('Expected the assertion to fail, but it passed');
}

describe.concurrent('signup through the API', () => {
  test('sends a Confirm mail whose link confirms the address', async ({ inbox, expect }) => {
    const signup = await postApp('/api/signup', { email: inbox.address });
    expect(signup.status).toBe(202);

    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    expect(mail.to).toEqual([inbox.address]);
    expect(mail.links).toHaveLength(1);

    // Follow the link with undici, as a user would click it.
    const page = await getPage(mail.links[0]!);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Email confirmed');
    expect(page.html).toContain(inbox.address);
  });

  test('sends a 6-digit code that the verify API accepts, and a wrong one it refuses', async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    const mail = await inbox.expectMail({ subject: /confirm/i });
    const [code] = mail.codes;
    expect(code).toMatch(/^\d{6}$/);

    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    expect(await postApp('/api/verify', { email: inbox.address, code: wrong })).toMatchObject({ status: 400, body: { error: 'wrong_code' } });
    expect(await postApp('/api/verify', { email: inbox.address, code })).toMatchObject({ status: 200, body: { verified: true } });
  });

  test('toReceiveMail passes when the Welcome mail arrives', async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    await expect(inbox).toReceiveMail({ subject: 'Welcome to Acme', from: /acme\.example/ });
  });

  test('the token from the Confirm mail works through the JSON API too', async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    const mail = await inbox.expectMail({ subject: 'Confirm your email' });
    const token = new URL(mail.links[0]!).searchParams.get('token');
    expect(await postApp('/api/confirm', { token })).toMatchObject({ status: 200, body: { email: inbox.address, confirmed: true } });
  });
});

describe.concurrent('not.toReceiveMail', () => {
  test('passes when no matching mail arrives within the quiet period', async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    await expect(inbox).toReceiveMail({ subject: 'Welcome to Acme' });
    // A first signup never sends the "someone tried" notice.
    await expect(inbox).not.toReceiveMail({ subject: 'Someone tried' }, { within: 1_500 });
  });

  test('fails, naming the mail, when a matching one arrives', async ({ inbox, expect }) => {
    await postApp('/api/signup', { email: inbox.address });
    await expect(inbox).toReceiveMail({ subject: 'Welcome to Acme' });
    // Signing up again sends the "someone tried" notice to the same address.
    await postApp('/api/signup', { email: inbox.address });

    const failure = await failureText(expect(inbox).not.toReceiveMail({ subject: /someone tried/i }, { within: 10_000 }));
    expect(failure).toContain('expect(inbox).not.toReceiveMail(filter)');
    expect(failure).toContain(inbox.address);
    expect(failure).toContain('subject ~ /someone tried/i');
    expect(failure).toContain('"Someone tried to sign up with your address"');
  });

  test('fails when the mail was already there before the matcher started (the watermark is from setup)', async ({ inbox, expect }) => {
    await send(inbox.address, { subject: 'Sent before the matcher' });
    const failure = await failureText(expect(inbox).not.toReceiveMail({ subject: 'Sent before' }, { within: 1_500 }));
    expect(failure).toContain('"Sent before the matcher"');
  });
});

describe.concurrent('toReceiveMail failing', () => {
  test('names the address, the filter, the budget and the subjects it rejected', async ({ inbox, expect }) => {
    await send(inbox.address, { subject: 'Welcome to Acme' });
    await send(inbox.address, { subject: 'Your invoice is late' });

    const message = await failureText(expect(inbox).toReceiveMail({ subject: 'Invoice #42' }, { timeout: 2_000 }));
    expect(message).toContain('expect(inbox).toReceiveMail(filter)');
    expect(message).toContain(`No mail matching subject ~ "Invoice #42" arrived at ${inbox.address} within 2 s`);
    expect(message).toContain('"Welcome to Acme"');
    expect(message).toContain('"Your invoice is late"');
  });
});

describe('the fixture', () => {
  test('gives a fresh address named after the test, with its watermark known in setup', async ({ inbox }) => {
    expect(inbox.address).toMatch(/^gives-a-fresh-address-named-afte-[a-z2-7]{16}@mailroom\.test$/);
    // A fresh address's watermark is "nothing yet" without a list call: the
    // first wait's first look is then immediate.
    expect(await stats(inbox.address)).toMatchObject({ list: 0, deleteMailbox: 0 });
    expect(inbox.watermark).toBeNull();
  });

  test('deletes the mailbox after a passing test', async ({ inbox, onTestFinished }) => {
    await send(inbox.address, { subject: 'Left behind' });
    expect(await stats(inbox.address)).toMatchObject({ deleteMailbox: 0 });
    // onTestFinished runs after the fixtures' teardown, so it sees the
    // delete; an assertion failing here fails this test.
    onTestFinished(async () => {
      expect(await stats(inbox.address)).toMatchObject({ deleteMailbox: 1 });
    });
  });
});
