// `npm run screenshots`: pictures of the web UI for the README, at desktop
// width (docs/ui-desktop.png, 1280 x 800) and a phone's (docs/ui-mobile.png,
// 360 x 740), and of the demo app's confirmation mail as `openMail` shows
// it in light mode, dark mode and at a phone's width (docs/mail-light.png,
// docs/mail-dark.png, docs/mail-phone.png). A real server on free ports,
// real mail over SMTP (the Acme demo app's own mails, and two more), real
// Chromium; nothing leaves the machine. Run after `npm run build` (the npm
// script does).
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { createTransport } from 'nodemailer';
import { createInbox } from '../dist/index.js';
import { openMail, type OpenMailOptions } from '../dist/playwright/index.js';
import { startServer } from '../dist/server/index.js';
import { chromiumLaunchOptions } from '../e2e/chromium.js';
import { confirmationMail, welcomeMail } from '../fixtures/demo-app/mails.js';

const DOCS = fileURLToPath(new URL('../docs/', import.meta.url));
const server = await startServer({ smtpPort: 0, httpPort: 0 });
const transport = createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
const acme = 'Acme <hello@acme.example>';
const ada = 'ada@mailroom.test';

try {
  await transport.sendMail({
    from: 'Billing <billing@acme.example>',
    to: 'grace@mailroom.test',
    subject: 'Your invoice for November',
    text: 'Attached.',
    attachments: [{ filename: 'invoice-2026-11.pdf', content: '%PDF-1.4 sample' }],
  });
  await transport.sendMail({ from: acme, to: 'alan@mailroom.test', subject: 'Reset your password', text: 'Reset it here: https://acme.example/reset?k=1' });
  const welcome = welcomeMail(ada);
  await transport.sendMail({ from: acme, to: ada, subject: welcome.subject, text: welcome.text });
  const confirm = confirmationMail({ email: ada, token: '9f2c4e1ab7d3', code: '482913', confirmed: false }, 'https://acme.example');
  await transport.sendMail({ from: acme, to: ada, subject: confirm.subject, text: confirm.text, html: confirm.html });

  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    for (const [file, viewport] of [
      ['ui-desktop.png', { width: 1280, height: 800 }],
      ['ui-mobile.png', { width: 360, height: 740 }],
    ] as const) {
      const page = await browser.newPage({ viewport, colorScheme: 'light' });
      await page.goto(`${server.apiURL}/?address=${encodeURIComponent(ada)}`);
      await page.getByRole('option', { name: /Confirm your email/ }).click();
      await page.frameLocator('iframe').getByText('The Acme team').waitFor();
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await page.screenshot({ path: `${DOCS}${file}` });
      console.log(`docs/${file} (${viewport.width} x ${viewport.height})`);
      await page.close();
    }
    // The confirmation mail as the test would see it, read back through the mailbox API.
    const inbox = await createInbox({ apiURL: server.apiURL, address: ada, watermark: null });
    const mail = await inbox.expectMail({ subject: confirm.subject });
    for (const [file, options] of [
      ['mail-light.png', { colorScheme: 'light' }],
      ['mail-dark.png', { colorScheme: 'dark' }],
      ['mail-phone.png', { width: 'phone' }],
    ] as const satisfies readonly (readonly [string, OpenMailOptions])[]) {
      // A mail client's reading pane, 800 px wide, the height of the mail; or a phone's screen.
      const page = await browser.newPage({ viewport: { width: 800, height: 400 } });
      await openMail(page, mail, options);
      await page.screenshot({ path: `${DOCS}${file}`, fullPage: true });
      console.log(`docs/${file} (${JSON.stringify(options)})`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
} finally {
  transport.close();
  await server.close();
}
