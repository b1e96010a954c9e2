// How long `mail.check()` takes on the demo app's confirmation mail: every
// check but accessibility (its link fetched from the running demo app), and
// with the Playwright adapter's accessibility check (axe-core in Chromium).
// The first call of each is cold (caniemail's data, axe's source, a browser
// context); the median is of the warm ones.
//   npm run build && npx tsx bench/mail-checks.ts [runs]
import { chromium } from '@playwright/test';
import { createInbox } from '../src/index.js';
import { accessibilityCheck } from '../src/playwright/accessibility-check.js';
import { startServer } from '../src/server/index.js';
import { startDemoApp } from '../fixtures/demo-app/index.js';
import { chromiumLaunchOptions } from '../e2e/chromium.js';

const runs = Number(process.argv[2] ?? 20);
const server = await startServer({ smtpPort: 0, httpPort: 0, logger: { info() {}, warn() {}, error() {} } });
const app = await startDemoApp({ smtp: { host: '127.0.0.1', port: server.smtpPort } });
const browser = await chromium.launch(chromiumLaunchOptions());
try {
  const inbox = await createInbox({ apiURL: server.apiURL, prefix: 'bench' });
  const answer = await fetch(`${app.url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: inbox.address }),
  });
  if (answer.status !== 202) throw new Error(`signup answered ${answer.status}`);
  const mail = await inbox.expectMail({ subject: 'Confirm your email' });

  const time = async (label: string, check: () => Promise<{ ok: boolean }>) => {
    const ms: number[] = [];
    for (let i = 0; i <= runs; i++) {
      const start = performance.now();
      const report = await check();
      ms.push(performance.now() - start);
      if (!report.ok) throw new Error(`${label}: the confirmation mail failed its checks`);
    }
    const [cold, ...warm] = ms;
    warm.sort((a, b) => a - b);
    const median = warm[Math.floor(warm.length / 2)]!;
    const p90 = warm[Math.floor(warm.length * 0.9)]!;
    console.log(
      `${label.padEnd(44)} cold ${cold!.toFixed(1).padStart(7)} ms   warm median ${median.toFixed(1).padStart(6)} ms   p90 ${p90.toFixed(1).padStart(6)} ms   (${runs} warm runs)`,
    );
  };

  await time('mail.check() (links, html, images, size, text)', () => mail.check());
  await time('  without links (no network)', () => mail.check({ skip: ['links'] }));
  await time('mail.check() + accessibility (axe, Chromium)', () => mail.check({ with: [accessibilityCheck(browser)] }));
} finally {
  await browser.close();
  await app.close();
  await server.close();
}
