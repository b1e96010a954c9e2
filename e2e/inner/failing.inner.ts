// A deliberately failing run, started by e2e/failure-output.spec.ts, which
// asserts on what these failures print. Each test signs up over the demo
// app's JSON API, so "Confirm your email" and "Welcome to Acme" arrive.
import { test, expect } from 'mailroomjs/playwright';
import type { APIRequestContext } from '@playwright/test';

// These tests fail on purpose and what is read is their text: no picture
// of their mail (screenshots.inner.ts has those), so no browser launched
// for each failed test's new worker.
test.use({ mailroom: { screenshots: 'off' } });

async function signUp(request: APIRequestContext, email: string): Promise<void> {
  const answer = await request.post('/api/signup', { data: { email } });
  expect(answer.status()).toBe(202);
}

test('waits for an invoice that never comes', async ({ inbox, request }) => {
  console.log(`inbox: ${inbox.address}`);
  await signUp(request, inbox.address);
  await expect(inbox).toReceiveMail({ subject: 'Invoice' }, { timeout: 3_000 });
});

test('expects no welcome mail', async ({ inbox, request }) => {
  console.log(`inbox: ${inbox.address}`);
  await signUp(request, inbox.address);
  await expect(inbox).not.toReceiveMail({ subject: 'Welcome' }, { within: 3_000 });
});

test('runs out of test time before the mail budget', async ({ inbox, request }) => {
  test.setTimeout(8_000);
  console.log(`inbox: ${inbox.address}`);
  await signUp(request, inbox.address);
  await expect(inbox).toReceiveMail({ subject: 'Invoice' });
});

test('runs out of test time while nothing arrives', async ({ inbox }) => {
  test.setTimeout(4_000);
  console.log(`inbox: ${inbox.address}`);
  await expect(inbox).toReceiveMail({ subject: 'Invoice' });
});

test.describe('with keepOnFailure', () => {
  test.use({ mailroom: { keepOnFailure: true, screenshots: 'off' } });

  test('keeps the mailbox of a failed test', async ({ inbox, request }) => {
    console.log(`inbox: ${inbox.address}`);
    await signUp(request, inbox.address);
    await inbox.expectMail({ subject: 'Confirm' });
    expect(1, 'fails on purpose').toBe(2);
  });
});

test.describe('with a misspelt option', () => {
  // @ts-expect-error the typo is the point: it must fail at setup, naming the key
  test.use({ mailroom: { timout: 5_000 } });

  test('never gets an inbox', ({ inbox }) => {
    console.log(`inbox: ${inbox.address}`);
  });
});

test.describe('with a 2 s mail budget', () => {
  test.use({ mailroom: { timeout: 2_000, screenshots: 'off' } });

  test("waits the option's budget", async ({ inbox }) => {
    console.log(`inbox: ${inbox.address}`);
    await expect(inbox).toReceiveMail({ subject: 'Invoice' });
  });
});

// Each wait and matcher fails on a line of its own: the outer spec finds
// that line in this file and checks that the report points at it.
test('waits with expectMail for a mail that never comes', async ({ inbox }) => {
  console.log(`inbox: ${inbox.address}`);
  await inbox.expectMail({ subject: 'Invoice' }, { timeout: 1_000 });
});

test('expects no welcome mail with expectNoMail', async ({ inbox, request }) => {
  console.log(`inbox: ${inbox.address}`);
  await signUp(request, inbox.address);
  await inbox.expectNoMail({ subject: 'Welcome' }, { within: 3_000 });
});

test('checks a mail whose HTML Gmail clips', async () => {
  await expect({ subject: 'Newsletter', html: '<p>Hello there</p>', text: 'Hello there', size: 200 }).toPassMailChecks({
    only: ['size'],
    size: { clipBytes: 10 },
  });
});
