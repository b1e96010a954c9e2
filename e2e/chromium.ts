// Which Chromium the e2e suite drives, and how to launch it on this kind of
// machine (a container without a GPU, a sandbox, or internet access).
import { existsSync } from 'node:fs';
import { chromium } from '@playwright/test';

/**
 * Debian's browsers, in the order they are looked for. The headless shell
 * (package chromium-headless-shell) first: every launch here is headless,
 * and the shell is what Playwright itself runs headless Chromium with, by
 * default, for the same reason: the full browser's new headless mode draws
 * and composites as a window would. The e2e suite alone took 155 CPU s on
 * the full browser and 85 on the shell, its wall time 94 s and 62 s; on
 * the two cores `npm test` shares, that CPU is its time.
 */
export const DEBIAN_BROWSERS: readonly string[] = Object.freeze(['/usr/bin/chromium-headless-shell', '/usr/bin/chromium']);

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
  /** Debian's packages' paths, in order (default: the headless shell, then chromium). */
  readonly debianPaths?: readonly string[];
  /** The browser `npx playwright install` downloads, if any for this platform. */
  readonly downloadedPath?: () => string | undefined;
}

/** What to run when there is no Chromium: printed as is by `npm run demo`. */
export const INSTALL_CHROMIUM_ADVICE: readonly string[] = Object.freeze([
  'Install one of them:',
  '  - Debian/Ubuntu: sudo apt-get install -y chromium-headless-shell (or chromium)',
  '  - where downloads work: npx playwright install chromium',
  '  - or set MAILROOM_CHROMIUM=/path/to/chromium',
]);

/**
 * The Chromium executable: `MAILROOM_CHROMIUM` when set, else Debian's
 * /usr/bin/chromium-headless-shell, else Debian's /usr/bin/chromium, else
 * the browser `npx playwright install` downloaded. Throws an error that says
 * what to run when there is none.
 */
export function findChromium(options: FindChromiumOptions = {}): string {
  const env = options.env ?? process.env;
  const debianPaths = options.debianPaths ?? DEBIAN_BROWSERS;
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
  const debian = debianPaths.find((path) => existsSync(path));
  if (debian) return debian;
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
      ...debianPaths.map((path) => `  - ${path} (missing)`),
      `  - Playwright's download ${downloaded ?? '(none for this platform)'} (missing)`,
      ...INSTALL_CHROMIUM_ADVICE,
    ].join('\n'),
  );
}

/** Launch options for `use.launchOptions` or `chromium.launch()`. */
export function chromiumLaunchOptions(): { executablePath: string; headless: true; args: string[] } {
  return { executablePath: findChromium(), headless: true, args: [...CHROMIUM_ARGS] };
}
