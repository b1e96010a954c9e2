// How long `mail.check()` takes on the demo app's confirmation mail: every
// check but accessibility (its link fetched from the running demo app), and
// with the Playwright adapter's accessibility check (axe-core in Chromium).
// The first call of each is cold (caniemail's data, axe's source, a browser
// context); the median is of the warm ones. Then mails built to be slow
// (src/checks/bounds.ts): `<i>` tags, each nested in the last, and styled
// rows just under the 256 KB the html check reads, checked in this process;
// and the server's checks (in a check thread) of a 3 MB mail, with the
// longest /healthz answer meanwhile.
//   npm run build && npx tsx bench/mail-checks.ts [runs]
import { chromium } from '@playwright/test';
import nodemailer from 'nodemailer';
import { checkMail } from '../src/checks/run-checks.js';
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

  const row = '<div style="display:flex;border-radius:4px;background-image:url(https://acme.example/x.png);position:absolute">row</div>\n';
  const large = [
    ['<i> tags, 100 KB', '<i>\n'.repeat(25 * 1024)],
    ['<i> tags, 1 MB', '<i>\n'.repeat(256 * 1024)],
    ['<i> tags, 3 MB', '<i>\n'.repeat(768 * 1024)],
    ['styled rows, 240 KB', row.repeat(Math.floor((240 * 1024) / row.length))],
  ] as const;
  for (const [label, html] of large) {
    const start = performance.now();
    const report = await checkMail({ html, text: 'x', size: html.length, subject: label }, { only: ['html', 'images'] });
    console.log(
      `checkMail (html, images) of ${label.padEnd(20)} ${(performance.now() - start).toFixed(0).padStart(6)} ms   ${report.problems.length} problems`,
    );
  }

  const address = `large-${Date.now()}@mailroom.test`;
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true });
  await transport.sendMail({ from: 'a@example.com', to: address, subject: 'large', text: 'x', html: large[2][1] });
  transport.close();
  const listed = (await (await fetch(`${server.apiURL}/api/v1/mailbox?address=${address}`)).json()) as { messages: { id: string }[] };
  const start = performance.now();
  let answered = false;
  const checks = fetch(`${server.apiURL}/api/v1/message/${listed.messages[0]!.id}/checks?mailbox=${address}`).finally(() => (answered = true));
  let longest = 0;
  while (!answered) {
    const asked = performance.now();
    await fetch(`${server.apiURL}/healthz`);
    longest = Math.max(longest, performance.now() - asked);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const status = (await checks).status;
  console.log(
    `server checks of the 3 MB mail: ${status} after ${(performance.now() - start).toFixed(0)} ms; the longest /healthz answer meanwhile ${longest.toFixed(0)} ms`,
  );
} finally {
  await browser.close();
  await app.close();
  await server.close();
}
