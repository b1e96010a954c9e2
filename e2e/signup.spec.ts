// The signup flow of the Acme demo app through real Chromium, with the
// `inbox` fixture and `toReceiveMail` exactly as a user writes them.
import { test, expect, openMail, MailTimeoutError } from 'mailroomjs/playwright';

test('signs up, confirms with the link, and gets the welcome mail', async ({ page, inbox }) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();

  const mail = await inbox.expectMail({ subject: 'Confirm' });
  expect(mail.to).toEqual([inbox.address]);
  expect(mail.links).toHaveLength(1);
  // As a person would: open the mail and click its button by name (a hidden
  // or mislabelled link would fail here, where `mail.links[0]` would not).
  await openMail(page, mail);
  await page.getByRole('link', { name: 'Confirm my email' }).click();
  await expect(page.getByRole('heading', { name: 'Email confirmed' })).toBeVisible();
  await expect(page.getByText(`${inbox.address} is confirmed`)).toBeVisible();

  await expect(inbox).toReceiveMail({ subject: 'Welcome' });
  await expect(inbox).not.toReceiveMail({ subject: 'Error' }, { within: 2_000 });
});

test('the code from the mail verifies the address', async ({ page, inbox }) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('link', { name: 'Enter the code instead' }).click();

  const mail = await inbox.expectMail({ subject: 'Confirm your email', from: 'acme.example' });
  // The code sits past the preview: only the fetched body has it.
  expect(mail.preview).not.toMatch(/\d{6}/);
  expect(mail.codes).toHaveLength(1);
  await expect(page.getByLabel('Email')).toHaveValue(inbox.address);
  await page.getByLabel('Code').fill(mail.codes[0]!);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('heading', { name: 'Code accepted' })).toBeVisible();
});

test('signing up twice warns the owner and sends no second confirmation', async ({ page, inbox }) => {
  for (let attempt = 0; attempt < 2; attempt++) {
    await page.goto('/');
    await page.getByLabel('Email').fill(inbox.address);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();
  }
  // The first signup's two mails, then the warning: each wait takes the next one.
  await expect(inbox).toReceiveMail({ subject: 'Confirm' });
  await expect(inbox).toReceiveMail({ subject: 'Welcome' });
  await expect(inbox).toReceiveMail({ subject: /someone tried/i });
  // Mail did arrive after the watermark, but none of it is a second confirmation.
  await expect(inbox).not.toReceiveMail({ subject: 'Confirm' }, { within: 1_500 });
  expect((await inbox.messages()).map((m) => m.subject).sort()).toEqual([
    'Confirm your email',
    'Someone tried to sign up with your address',
    'Welcome to Acme',
  ]);
});

test('received mail is attached to the report, HTML and text', async ({ page, inbox }, testInfo) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await inbox.expectMail({ subject: 'Confirm' });

  const attached = testInfo.attachments.map((a) => [a.name, a.contentType]);
  expect(attached).toEqual([
    [`mail "Confirm your email" to ${inbox.address}.html`, 'text/html'],
    [`mail "Confirm your email" to ${inbox.address}.txt`, 'text/plain'],
  ]);
  expect(testInfo.attachments[1]?.body?.toString()).toMatch(/^Codes: \d{6}$/m);
});

test('a wait longer than the test has left ends first, with its own message', async ({ inbox }) => {
  // 10 s: the cut comes its longest margin, 1 s, before the deadline.
  test.setTimeout(10_000);
  const error = await inbox.expectMail({ subject: 'Never sent' }).catch((e: unknown) => e);

  expect(error).toBeInstanceOf(MailTimeoutError);
  const timeout = error as MailTimeoutError;
  expect(timeout.budgetMs).toBe(30_000);
  expect(timeout.cutShort).toBe(true);
  expect(timeout.message).toContain(`No mail matching subject ~ "Never sent" arrived at ${inbox.address}`);
  expect(timeout.message).toMatch(/cut short of its 30 s budget \(the test's own timeout was [\d.]+ s away\)/);
  // Ended before the test's deadline by the wait's own clock. When the cut
  // fires (a tenth of the time left, 100 ms to 1 s, before the deadline) is
  // deadlineCut's, asserted on fake timers in test/runner/test-inbox.integration.test.ts;
  // here, beside stress-ng, the timer and the abort came 720 ms late once
  // (flake run s84), so only the order is asserted, not the room left.
  const away = /the test's own timeout was ([\d.]+) s away/.exec(timeout.message);
  expect(away, timeout.message).not.toBeNull();
  expect(timeout.elapsedMs, timeout.message).toBeLessThan(Number(away![1]) * 1_000);
});
