// The maildev project's servers (playwright.config.ts): a real maildev 3
// (the devDependency) and a second Acme demo app whose SMTP points at it,
// so e2e/signup.spec.ts runs unchanged against a catcher a team may already
// run. Fixed ports beside the default project's (e2e/servers.ts); set the
// variables to move them.
import { DEMO_RETRY_ENV, ROOT } from './servers.js';

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new TypeError(`Expected ${name} to be a port from 1 to 65535, got "${raw}"`);
  return port;
}

export const MAILDEV_SMTP_PORT = portFromEnv('MAILROOM_E2E_MAILDEV_SMTP_PORT', 1126);
export const MAILDEV_WEB_PORT = portFromEnv('MAILROOM_E2E_MAILDEV_WEB_PORT', 1127);
export const MAILDEV_APP_PORT = portFromEnv('MAILROOM_E2E_MAILDEV_APP_PORT', 3127);

/** maildev's web address: the `apiURL` of `backend: 'maildev'`. */
export const MAILDEV_URL = `http://127.0.0.1:${MAILDEV_WEB_PORT}`;
export const MAILDEV_APP_URL = `http://127.0.0.1:${MAILDEV_APP_PORT}`;

export const maildevWebServer = {
  name: 'maildev',
  command: [
    JSON.stringify(process.execPath),
    'node_modules/maildev/dist/bin/maildev.js',
    `--smtp ${MAILDEV_SMTP_PORT}`,
    `--web ${MAILDEV_WEB_PORT}`,
    '--ip 127.0.0.1',
    '--web-ip 127.0.0.1',
    '--silent',
  ].join(' '),
  cwd: ROOT,
  url: `${MAILDEV_URL}/api/healthz`,
  reuseExistingServer: false,
  stdout: 'pipe',
  timeout: 30_000,
  gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
} as const;

/** The demo app again, delivering to maildev. */
export const maildevDemoAppWebServer = {
  name: 'acme (maildev)',
  command: `${JSON.stringify(process.execPath)} --import tsx fixtures/demo-app/main.ts`,
  cwd: ROOT,
  url: `${MAILDEV_APP_URL}/healthz`,
  env: { DEMO_PORT: String(MAILDEV_APP_PORT), MAILROOM_SMTP_PORT: String(MAILDEV_SMTP_PORT), DEMO_RETRY: DEMO_RETRY_ENV },
  reuseExistingServer: false,
  stdout: 'pipe',
  timeout: 30_000,
  gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
} as const;
