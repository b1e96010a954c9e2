import { defineConfig } from '@playwright/test';
import { mailroomWebServer, type MailroomOptions } from 'mailroom/playwright';

const smtpPort = Number(process.env.PACK_SMTP_PORT);
const httpPort = Number(process.env.PACK_HTTP_PORT);

export default defineConfig<MailroomOptions>({
  testMatch: 'signup.spec.ts',
  workers: 2,
  reporter: 'list',
  webServer: [mailroomWebServer({ smtpPort, httpPort, reuseExistingServer: false })],
  use: {
    baseURL: process.env.DEMO_URL,
    mailroom: { apiURL: `http://127.0.0.1:${httpPort}` },
    launchOptions: {
      executablePath: process.env.MAILROOM_CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
});
