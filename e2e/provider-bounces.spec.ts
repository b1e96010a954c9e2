// A bounce, end to end through real Chromium: the Acme demo app sends its
// signup mail through Resend's SDK (at mailroom's Resend API), the deferral
// lab refuses the address for good, mailroom posts Resend's `email.bounced`
// to the app's bounce handler signed as Resend signs it, the handler checks
// that signature with Resend's own code and marks the address - and the next
// signup at it is told "we could not reach this address", with no mail sent
// (docs/providers.md, "Delivery events"; fixtures/demo-app/bounces.ts).
import { test, expect } from 'mailroomjs/playwright';
import { DEMO_RESEND_WEBHOOK_SECRET } from '../fixtures/demo-app/bounces.js';
import { RESEND_APP_PORT } from './servers.js';

const RESEND_APP = `http://127.0.0.1:${RESEND_APP_PORT}`;
const FAST = { maxAttempts: 5, initialDelayMs: 200, factor: 2, maxDelayMs: 2_000 };

test.use({ baseURL: RESEND_APP });

test('the lab bounces the signup address: the app hears it from Resend, says it could not reach it, and sends nothing more', async ({ page, inbox }) => {
  const hook = await inbox.webhooks.add({ url: `${RESEND_APP}/webhooks/resend`, format: 'resend', secret: DEMO_RESEND_WEBHOOK_SECRET, retry: FAST });
  // The confirmation and the welcome mail are both refused for good.
  await inbox.smtp.reject({ times: 2 });

  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();
  // Resend's events reached the handler, which verified them (a bad signature would be a 401, dead-lettered).
  await expect(hook).toHaveDelivered('provider.bounced', { attempts: 1 });

  // Trying again: the lab would take the mail now, but the app no longer sends to the address.
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('heading', { name: 'We could not reach this address' })).toBeVisible();
  await expect(page.getByRole('alert')).toContainText(`Mail to ${inbox.address} bounced`);
  await expect(inbox).not.toReceiveMail(undefined, { within: 2_000 });
});
