// A picture of a mail for the report (the `screenshots` option): the mail
// shown as openMail shows it (scripts never run), in a context of its own at
// a fixed width, so pictures of one mail compare across runs and machines.
import type { Browser } from '@playwright/test';
import type { Mail } from '../inbox/mail.js';
import { openMail } from './open-mail.js';

/** The width a mail is rendered at: a common mail client's reading pane. */
export const PICTURE_WIDTH = 800;

// A mail whose remote images never answer must not hold the teardown: the
// picture is taken with what has loaded by then.
const LOAD_TIMEOUT_MS = 5_000;

/** The mail rendered at `PICTURE_WIDTH`, the full height of its page, as PNG. */
export async function mailPicture(browser: Browser, mail: Pick<Mail, 'html' | 'text' | 'subject' | 'id'>): Promise<Buffer> {
  const context = await browser.newContext({ viewport: { width: PICTURE_WIDTH, height: 600 }, javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    page.setDefaultNavigationTimeout(LOAD_TIMEOUT_MS);
    await openMail(page, mail).catch((error: unknown) => {
      // Still loading (a slow image): what is on the page is the picture.
      if (!(error instanceof Error && error.name === 'TimeoutError')) throw error;
    });
    return await page.screenshot({ fullPage: true, type: 'png' });
  } finally {
    await context.close();
  }
}
