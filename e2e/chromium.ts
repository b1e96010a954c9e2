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

/** Where to look; tests replace these. */
export interface FindChromiumOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Debian's package path (default /usr/bin/chromium). */
  readonly debianPath?: string;
  /** The browser `npx playwright install` downloads, if any for this platform. */
  readonly downloadedPath?: () => string | undefined;
}

/** What to run when there is no Chromium: printed as is by `npm run demo`. */
export const INSTALL_CHROMIUM_ADVICE: readonly string[] = Object.freeze([
  'Install one of them:',
  '  - Debian/Ubuntu: sudo apt-get install -y chromium',
  '  - where downloads work: npx playwright install chromium',
  '  - or set MAILROOM_CHROMIUM=/path/to/chromium',
]);

/**
 * The Chromium executable: `MAILROOM_CHROMIUM` when set, else Debian's
 * /usr/bin/chromium, else the browser `npx playwright install` downloaded.
 * Throws an error that says what to run when there is none.
 */
export function findChromium(options: FindChromiumOptions = {}): string {
  const env = options.env ?? process.env;
  const debianPath = options.debianPath ?? DEBIAN_CHROMIUM;
  const override = env.MAILROOM_CHROMIUM;
  if (override) {
    if (!existsSync(override)) {
      throw new Error(
        [
          `MAILROOM_CHROMIUM is set to ${override}, but there is no file there. Point it at a Chromium executable or unset it.`,
          ...INSTALL_CHROMIUM_ADVICE,
        ].join('\n'),
      );
    }
    return override;
  }
  if (existsSync(debianPath)) return debianPath;
  let downloaded: string | undefined;
  try {
    downloaded = (options.downloadedPath ?? (() => chromium.executablePath()))();
  } catch {
    // Playwright has no build for this platform; fall through to the advice below.
  }
  if (downloaded && existsSync(downloaded)) return downloaded;
  throw new Error(
    [
      'No Chromium found for the e2e tests. Looked at:',
      `  - MAILROOM_CHROMIUM (not set)`,
      `  - ${debianPath} (missing)`,
      `  - Playwright's download ${downloaded ?? '(none for this platform)'} (missing)`,
      ...INSTALL_CHROMIUM_ADVICE,
    ].join('\n'),
  );
}

/** Launch options for `use.launchOptions` or `chromium.launch()`. */
export function chromiumLaunchOptions(): { executablePath: string; headless: true; args: string[] } {
  return { executablePath: findChromium(), headless: true, args: [...CHROMIUM_ARGS] };
}
