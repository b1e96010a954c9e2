// Which Chromium the e2e suite drives, and how to launch it on this kind of
// machine (a container without a GPU, a sandbox, or internet access).
import { existsSync } from 'node:fs';
import { chromium } from '@playwright/test';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags Chromium needs here: no sandbox (containers run as root), no GPU, and
 * none of the background traffic (updates, sync, QUIC probes) that would only
 * slow a test run down or reach for the network.
 */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]);

/**
 * The Chromium executable: `MAILROOM_CHROMIUM` when set, else Debian's
 * /usr/bin/chromium, else the browser `npx playwright install` downloaded.
 * Throws an error that says what to run when there is none.
 */
export function findChromium(): string {
  const override = process.env.MAILROOM_CHROMIUM;
  if (override) {
    if (!existsSync(override)) {
      throw new Error(`MAILROOM_CHROMIUM is set to ${override}, but there is no file there. Point it at a Chromium executable or unset it.`);
    }
    return override;
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  let downloaded: string | undefined;
  try {
    downloaded = chromium.executablePath();
  } catch {
    // Playwright has no build for this platform; fall through to the advice below.
  }
  if (downloaded && existsSync(downloaded)) return downloaded;
  throw new Error(
    [
      'No Chromium found for the e2e tests. Looked at:',
      `  - MAILROOM_CHROMIUM (not set)`,
      `  - ${DEBIAN_CHROMIUM} (missing)`,
      `  - Playwright's download ${downloaded ?? '(none for this platform)'} (missing)`,
      'Install one of them:',
      '  - Debian/Ubuntu: apt-get install -y chromium',
      '  - where downloads work: npx playwright install chromium',
      '  - or set MAILROOM_CHROMIUM=/path/to/chromium',
    ].join('\n'),
  );
}

/** Launch options for `use.launchOptions` or `chromium.launch()`. */
export function chromiumLaunchOptions(): { executablePath: string; headless: true; args: string[] } {
  return { executablePath: findChromium(), headless: true, args: [...CHROMIUM_ARGS] };
}
