// `expect(mail).toPassMailChecks()` in Playwright: the demo app's
// confirmation mail passes every check, accessibility (axe-core in the
// fixtures' browser) included; a broken mail fails with each problem listed
// as a person fixes it; and the report is attached beside the mail.
import { stripVTControlCharacters } from 'node:util';
import { createTransport } from 'nodemailer';
import { test, expect, accessibilityCheck } from 'mailroomjs/playwright';
import { API_URL, APP_URL, SMTP_PORT } from './servers.js';

// A guard of a hang, never a speed claim: each test launches a Chromium
// for the checks or opens a page, and runs axe, each of which took 10-20 s
// under npm test's load on two cores (a CI run ran out the config's 60 s on
// the first test with every step moving).
test.describe.configure({ timeout: 120_000 });

async function send(to: string, mail: { subject: string; html: string; text?: string }): Promise<void> {
  const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({ from: 'Acme <hello@acme.example>', to, ...mail });
  } finally {
    transport.close();
  }
}

async function failureText(assertion: Promise<unknown>): Promise<string> {
  try {
    await assertion;
  } catch (error) {
    return stripVTControlCharacters(error instanceof Error ? error.message : String(error));
  }
  throw new Error('Expected the assertion to fail, but it passed');
}

test("the demo app's confirmation mail passes every check, accessibility included", async ({ page, inbox }) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  const mail = await inbox.expectMail({ subject: 'Confirm your email' });

  await expect(mail).toPassMailChecks();
  const report = test.info().attachments.find((a) => a.name === `mail "Confirm your email" to ${inbox.address} checks.txt`);
  // No problem (Yahoo's partial support of `lang`, "not on <td>", was one; its lang is on <html>), and each client shows all of it.
  expect(report?.body?.toString()).toBe(
    [
      'Mail checks of "Confirm your email" (links, html, images, size, text, accessibility): no problems.',
      'Client support (how much of the mail each shows as written): gmail 100%, outlook 100%, apple-mail 100%, yahoo 100%.',
      '',
    ].join('\n'),
  );
  // The test's page is left where it was.
  await expect(page).toHaveURL(/127\.0\.0\.1/);
});

test('a broken mail fails, each problem listed with its fix, and the report is attached beside the mail', async ({ inbox, browser }) => {
  await send(inbox.address, {
    subject: 'Your order',
    text: `See your order: ${APP_URL}/orders/42`,
    html: [
      '<html lang="en"><body>',
      `<p><a href="${APP_URL}/orders/42">See your order</a></p>`,
      '<p><a href="https://acme.example/help"><img src="https://acme.example/help.png"></a></p>',
      '</body></html>',
    ].join('\n'),
  });
  const mail = await inbox.expectMail({ subject: 'Your order' });
  const text = await failureText(expect(mail).toPassMailChecks({ skip: ['html'], links: { skip: ['acme.example'] } }));
  console.log(`toPassMailChecks failure text (Playwright):\n${text}`);
  const axe = /https:\/\/dequeuniversity\.com\/rules\/axe\/[\d.]+\/([a-z-]+)(?=\.)/g;
  expect(text.replace(axe, 'https://dequeuniversity.com/rules/axe/…/$1')).toBe(
    [
      'expect(mail).toPassMailChecks(options)',
      '',
      `Mail "Your order" to ${inbox.address} failed its checks (links, images, size, text, accessibility): 4 errors.`,
      '',
      `1. [links error] The link "See your order" (also in the text part) → ${APP_URL}/orders/42 answered 404 Not Found.`,
      '   Fix: Fix the link, or the page it points to.',
      '2. [images error] The image https://acme.example/help.png has no alt text (line 3: <img src="https://acme.example/help.png">).',
      '   Fix: Add alt="…" saying what the image shows, or alt="" if it is only decoration.',
      '3. [accessibility error] Images must have alternative text (axe image-alt, critical): <img src="https://acme.example/help.png">.',
      '   Fix: Ensure <img> elements have alternative text or a role of none or presentation; see https://dequeuniversity.com/rules/axe/…/image-alt.',
      '4. [accessibility error] Links must have discernible text (axe link-name, serious): <a href="https://acme.example/help"><img src="https://acme.example/help.png"></a>.',
      '   Fix: Ensure links have discernible text; see https://dequeuniversity.com/rules/axe/…/link-name.',
      '',
      'Expected: no errors',
      'Received: 4 errors',
    ].join('\n'),
  );

  const names = test.info().attachments.map((a) => a.name);
  expect(names).toContain(`mail "Your order" to ${inbox.address}.html`);
  expect(names).toContain(`mail "Your order" to ${inbox.address} checks.txt`);

  // The same check through mail.check(), in a browser the test has.
  const report = await mail.check({ only: ['accessibility'], with: [accessibilityCheck(browser)] });
  expect(report.ok).toBe(false);
  expect(report.problems.map((p) => p.rule)).toEqual(['image-alt', 'link-name']);
});

test("the web UI's Checks tab shows the same report, fetching the links only when asked", async ({ page, inbox }) => {
  await send(inbox.address, {
    subject: 'Your invoice',
    text: 'Your invoice is ready.',
    html: `<html lang="en"><body><p><a href="${APP_URL}/invoices/7">Your invoice</a></p><img src="https://acme.example/logo.png"></body></html>`,
  });
  await page.goto(`${API_URL}/?address=${encodeURIComponent(inbox.address)}`);
  await page.getByRole('option', { name: /Your invoice/ }).click();
  await page.getByRole('tab', { name: 'Checks' }).click();

  const checks = page.getByRole('region', { name: 'Mail checks' });
  await expect(checks).toContainText('Fails the checks: html, images, size, text.');
  // The status line is inset like the message head above it, not flush with the pane's edge.
  const status = await checks.getByText('Fails', { exact: true }).boundingBox();
  const title = await page.getByRole('heading', { name: 'Your invoice' }).boundingBox();
  expect(status?.x).toBe(title?.x);
  // The image's error, and no warning: Yahoo's partial support of `lang` ("not on <td>") does not apply to <html lang>.
  await expect(checks.getByRole('listitem')).toHaveCount(1);
  await expect(checks.getByRole('listitem').first()).toContainText('images error The image https://acme.example/logo.png has no alt text');
  await expect(checks).toContainText('Client support: gmail 100% · outlook 100% · apple-mail 100% · yahoo 100%');

  await checks.getByRole('button', { name: 'Check links too' }).click();
  await expect(checks).toContainText('Fails the checks: links, html, images, size, text.');
  await expect(checks.getByRole('listitem').first()).toContainText(`links error The link "Your invoice" → ${APP_URL}/invoices/7 answered 404 Not Found.`);
  await expect(checks.getByRole('listitem')).toHaveCount(2);
});
