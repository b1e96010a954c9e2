// The demo's signup flow, generated `MAILROOM_BENCH_SUITE_TESTS` times (100
// by default), taking the confirmation link the way MAILROOM_BENCH_SUITE_WAY
// says (see ways.ts). Everything else is the same in every way: open the
// page, type the address, click "Sign up", see "Check your inbox", take the
// link, open it, see the address confirmed. Each test leaves its timings as
// an annotation for timings-reporter.ts.
import { randomBytes } from 'node:crypto';
import { test as playwrightTest, expect, type Page, type TestInfo } from '@playwright/test';
import { test as mailroomTest } from 'mailroomjs/playwright';
import { linkByHandWrittenLoop } from './hand-written-loop.js';
import { CONFIRM_LINK, ENV, TIMINGS_ANNOTATION, requiredEnv, testsFromEnv, wayFromEnv, type Timings } from './ways.js';

const way = wayFromEnv();
const count = testsFromEnv();
const appURL = requiredEnv(ENV.appURL);
const apiURL = requiredEnv('MAILROOM_API_URL');

/** The flow; `takeLink` is the only part that differs between the ways. */
async function signUpAndConfirm(page: Page, testInfo: TestInfo, address: string, takeLink: () => Promise<string>): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Email').fill(address);
  const clickedAt = performance.now();
  // The app sends the mail, and only then answers with the next page.
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('heading', { name: 'Check your inbox' })).toBeVisible();
  const answeredAt = performance.now();
  const link = await takeLink();
  const inHandAt = performance.now();
  const timings: Timings = { clickToMailMs: inHandAt - clickedAt, answeredToMailMs: inHandAt - answeredAt };
  testInfo.annotations.push({ type: TIMINGS_ANNOTATION, description: JSON.stringify(timings) });

  await page.goto(link);
  await expect(page.getByText(`${address} is confirmed`)).toBeVisible();
}

/** Way (d): the demo app's record of what it sent (fixtures/demo-app/outbox.ts), no mailbox at all. */
async function linkFromOutbox(address: string): Promise<string> {
  const answer = await fetch(`${appURL}/api/outbox?${new URLSearchParams({ to: address })}`);
  const { mails } = (await answer.json()) as { mails: readonly { subject: string; text: string }[] };
  const link = CONFIRM_LINK.exec(mails.find((m) => m.subject.includes('Confirm'))?.text ?? '')?.[0];
  if (!link) throw new Error(`The demo app's outbox holds no confirmation link for ${address}; it sent ${JSON.stringify(mails.map((m) => m.subject))}`);
  return link;
}

/** For the ways without the `inbox` fixture: 80 random bits, as mailroom's own addresses have. */
const freshAddress = (i: number): string => `signup-${i}-${randomBytes(10).toString('hex')}@mailroom.test`;

for (let i = 0; i < count; i++) {
  if (way === 'mailroom' || way === 'polling') {
    // (b) differs from (a) only by MAILROOM_SERVER_WAIT=0 in this run's environment.
    mailroomTest(`signup ${i}`, async ({ page, inbox }, testInfo) => {
      await signUpAndConfirm(page, testInfo, inbox.address, async () => {
        const mail = await inbox.expectMail({ subject: 'Confirm' });
        const link = mail.links[0];
        if (!link) throw new Error(`"${mail.subject}" to ${inbox.address} has no link`);
        return link;
      });
    });
  } else {
    playwrightTest(`signup ${i}`, async ({ page }, testInfo) => {
      const address = freshAddress(i);
      await signUpAndConfirm(page, testInfo, address, () => (way === 'outbox' ? linkFromOutbox(address) : linkByHandWrittenLoop(apiURL, address, 'Confirm')));
    });
  }
}
