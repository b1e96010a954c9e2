import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './e2e/chromium.js';

// Each spec starts what it needs (the demo app, an SMTP server) on port 0,
// so no webServer is declared here.
export default defineConfig({
  testDir: 'e2e',
  workers: 4,
  fullyParallel: true,
  forbidOnly: Boolean(process.env.CI),
  reporter: [['list'], ['html', { outputFolder: 'playwright-report', open: 'never' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions(),
    trace: 'retain-on-failure',
  },
});
