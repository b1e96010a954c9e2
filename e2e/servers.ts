// Where the e2e suite's servers listen. One mailroom server and one demo app
// serve every worker, every shard and every inner run (child processes read
// the same variables). The defaults are fixed ports away from mailroom's own
// (2525/8025) and the demo app's (3000), so a developer's `mailroom serve`
// keeps running; set the variables to move them.
import { fileURLToPath } from 'node:url';
import { providerSettings } from 'mailroomjs';

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new TypeError(`Expected ${name} to be a port from 1 to 65535, got "${raw}"`);
  return port;
}

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export const SMTP_PORT = portFromEnv('MAILROOM_E2E_SMTP_PORT', 2626);
export const HTTP_PORT = portFromEnv('MAILROOM_E2E_HTTP_PORT', 8126);
export const APP_PORT = portFromEnv('MAILROOM_E2E_APP_PORT', 3126);
/** The demo app again, sending through a provider's API with its SDK (Resend, SES), into the same mailroom server. */
export const RESEND_APP_PORT = portFromEnv('MAILROOM_E2E_RESEND_APP_PORT', 3129);
export const SES_APP_PORT = portFromEnv('MAILROOM_E2E_SES_APP_PORT', 3130);

/** The mailbox API the tests read, as `use: { mailroom: { apiURL } }`. */
export const API_URL = `http://127.0.0.1:${HTTP_PORT}`;
/** The Acme demo app, as `use: { baseURL }`. */
export const APP_URL = `http://127.0.0.1:${APP_PORT}`;

/** The demo app's retry policy in the e2e run (fixtures/demo-app/backoff.ts). */
export const DEMO_RETRY_ENV = 'attempts=5,firstDelayMs=1000,factor=2,maxDelayMs=4000,jitter=0.25';

/**
 * The demo app sending through a provider's API (`DEMO_MAIL_VIA`), its SDK
 * pointed at the e2e mailroom server by the environment `providerSettings`
 * hands out, as a user's Playwright config does (docs/providers.md).
 */
export function providerDemoAppWebServer(via: 'resend' | 'ses', port: number) {
  return {
    ...demoAppWebServer,
    name: `acme-${via}`,
    url: `http://127.0.0.1:${port}/healthz`,
    env: {
      ...demoAppWebServer.env,
      DEMO_PORT: String(port),
      DEMO_MAIL_VIA: via,
      ...providerSettings(API_URL).env,
      // The AWS SDK signs every call: any region and credentials do.
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'acme-demo',
      AWS_SECRET_ACCESS_KEY: 'acme-demo',
    },
  };
}

/** The demo app as a `webServer` entry, sending its mail to the e2e mailroom server. */
export const demoAppWebServer = {
  name: 'acme',
  command: `${JSON.stringify(process.execPath)} --import tsx fixtures/demo-app/main.ts`,
  cwd: ROOT,
  url: `${APP_URL}/healthz`,
  // Retries a second after a deferral, doubling to 4 s, so the deferral lab's specs finish in seconds.
  env: { DEMO_PORT: String(APP_PORT), MAILROOM_SMTP_PORT: String(SMTP_PORT), DEMO_RETRY: DEMO_RETRY_ENV },
  // Never a demo app already on the port: a stale one (older code, another
  // branch) would pass or fail for it. Playwright refuses to start then, naming the port.
  reuseExistingServer: false,
  stdout: 'pipe',
  timeout: 30_000,
  gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
} as const;
