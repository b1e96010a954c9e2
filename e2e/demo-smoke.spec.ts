// Smoke test of the demo app in real Chromium: the signup page works and the
// mail it sends reaches a real SMTP server. The mailroom fixtures are proven
// elsewhere; here only the app under test and the browser setup are.
import { expect, test as base } from '@playwright/test';
import { SUBJECTS, startDemoApp } from '../fixtures/demo-app/index.js';
import type { DemoApp } from '../fixtures/demo-app/index.js';
import { startSmtpSink } from '../fixtures/smtp-sink.js';
import type { SmtpSink } from '../fixtures/smtp-sink.js';

const test = base.extend<{ sink: SmtpSink; app: DemoApp; email: string }>({
  sink: async ({}, use) => {
    const sink = await startSmtpSink();
    await use(sink);
    await sink.close();
  },
  app: async ({ sink }, use) => {
    const app = await startDemoApp({ smtp: { host: sink.host, port: sink.port } });
    await use(app);
    await app.close();
  },

  email: async ({}, use, testInfo) => {
    await use(`smoke-${testInfo.testId}-${testInfo.repeatEachIndex}-${testInfo.retry}@example.test`);
  },
});

test('signing up shows "Check your inbox" and delivers the mails', async ({ page, app, sink, email }) => {
  await page.goto(app.url);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Sign up' }).click();

  await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();
  await expect(page.getByText(email)).toBeVisible();
  const mails = await sink.waitFor(2, { to: email });
  expect(mails.map((m) => m.parsed.subject).sort()).toEqual([SUBJECTS.confirm, SUBJECTS.welcome].sort());

  const confirm = mails.find((m) => m.parsed.subject === SUBJECTS.confirm)!;
  const link = /href="([^"]+)"/.exec(confirm.parsed.html ?? '')?.[1];
  expect(link, 'the confirmation mail has a link').toBeDefined();
  await page.goto(link!);
  await expect(page.getByRole('heading', { name: 'Email confirmed' })).toBeVisible();
  await expect(page.getByText(`${email} is confirmed`)).toBeVisible();
});

test('the code from the mail is accepted on the verify page', async ({ page, app, sink, email }) => {
  await page.goto(app.url);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('link', { name: 'Enter the code instead' }).click();

  const [confirm] = (await sink.waitFor(2, { to: email })).filter((m) => m.parsed.subject === SUBJECTS.confirm);
  const code = /\b\d{6}\b/.exec(confirm?.parsed.text ?? '')?.[0];
  expect(code, 'the confirmation mail has a 6-digit code').toBeDefined();
  await expect(page.getByLabel('Email')).toHaveValue(email);
  await page.getByLabel('Code').fill(code!);
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('heading', { name: 'Code accepted' })).toBeVisible();
});

test('an invalid address is refused on the page and sends nothing', async ({ page, app, sink }) => {
  await page.goto(app.url);
  await page.getByLabel('Email').fill('not-an-email');
  await page.getByRole('button', { name: 'Sign up' }).click();

  await expect(page.getByRole('alert')).toHaveText('Enter a valid email address, like name@example.com.');
  await expect(page.getByLabel('Email')).toHaveValue('not-an-email');
  // The app sends before it answers, so the page being shown means nothing was sent.
  expect(sink.messages).toEqual([]);
});
