// `npm run demo`: the whole story in one command. Playwright starts the
// mailroom server and the Acme demo app (playwright.config.ts `webServer`),
// runs the signup e2e in headless Chromium, and this script says where the
// HTML report is. Arguments after `--` go to `playwright test`.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { findChromium } from '../e2e/chromium.js';
import { API_URL, APP_URL, ROOT, SMTP_PORT } from '../e2e/servers.js';

const SPEC = 'e2e/signup.spec.ts';
const REPORT = join(ROOT, 'playwright-report');

let browser: string;
try {
  browser = findChromium();
} catch (error) {
  console.error(`demo: ${(error as Error).message}`);
  console.error('Then run `npm run demo` again.');
  process.exit(1);
}

console.log(`demo: Chromium ${browser}`);
console.log(`demo: Playwright starts the mailroom server (SMTP 127.0.0.1:${SMTP_PORT}, API ${API_URL}) and the Acme demo app (${APP_URL}),`);
console.log(`demo: then runs ${SPEC} in headless Chromium with 4 workers.\n`);

const cli = createRequire(import.meta.url).resolve('@playwright/test/cli');
const child = spawn(process.execPath, [cli, 'test', SPEC, ...process.argv.slice(2)], { cwd: ROOT, stdio: 'inherit' });
const stop = (signal: NodeJS.Signals) => child.kill(signal);
process.once('SIGINT', stop).once('SIGTERM', stop);
child.once('close', (code, signal) => {
  console.log(`\ndemo: ${code === 0 ? 'the signup flow passed' : `playwright test ended with ${signal ?? `exit code ${code}`}`}.`);
  console.log(`demo: HTML report: ${join(REPORT, 'index.html')}`);
  console.log('demo: open it with `npx playwright show-report`.');
  process.exitCode = code ?? 1;
});
