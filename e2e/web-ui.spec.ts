// The web UI of the embedded server (`/`) in real Chromium, against the e2e
// run's mailroom server, with mail sent over real SMTP. Each test works in a
// fresh mailbox of its own (the `inbox` fixture's address), opened by a deep
// link. The "remote" images and beacons are a small HTTP server on a real
// socket that counts what it was asked for.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTransport } from 'nodemailer';
import { startServer } from 'mailroomjs/server';
import { test as base, expect } from 'mailroomjs/playwright';
import { DEMO_WEBHOOK_SECRET } from '../fixtures/demo-app/support-desk.js';
import { API_URL, APP_URL, SMTP_PORT } from './servers.js';

interface Remote {
  readonly url: string;
  /** How often each path was asked for. */
  hits(path: string): number;
  /** Every path asked for, in order. */
  paths(): string[];
}

type Send = (mail: {
  subject: string;
  text?: string;
  html?: string;
  from?: string;
  attachments?: { filename: string; content: string | Buffer; cid?: string; contentType?: string }[];
}) => Promise<void>;

const test = base.extend<{ remote: Remote; send: Send; mailbox: string }>({
  remote: async ({}, use) => {
    const counts = new Map<string, number>();
    const asked: string[] = [];
    const server = createServer((req, res) => {
      counts.set(req.url ?? '/', (counts.get(req.url ?? '/') ?? 0) + 1);
      asked.push(req.url ?? '/');
      // A 1x1 transparent GIF.
      res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' });
      res.end(Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    await use({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: (path) => counts.get(path) ?? 0, paths: () => [...asked] });
    server.close();
  },
  send: async ({ inbox }, use) => {
    const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
    await use(async (mail) => void (await transport.sendMail({ from: 'Acme <hello@acme.example>', to: inbox.address, ...mail })));
    transport.close();
  },
  /** The UI opened at the test's mailbox, its live stream connected. */
  mailbox: async ({ page, inbox }, use) => {
    await page.goto(`${API_URL}/?address=${encodeURIComponent(inbox.address)}`);
    await expect(page.getByRole('heading', { name: inbox.address })).toBeVisible();
    await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();
    await use(inbox.address);
  },
});

test('a new mail is listed without a reload, carried by the live stream: no request for it', async ({ page, mailbox, send }) => {
  await expect(page.getByText(`No mail for ${mailbox} yet`)).toBeVisible();
  // A reload would lose this.
  await page.evaluate('window.sameDocument = true');
  // The stream brings the mail's summary with it: a re-list of the mailbox,
  // a reconnected stream or a reload would each be a request here. (How
  // soon it shows is the speed's business, not a bound a loaded machine
  // can be trusted with; the annotation records it.)
  const asked: string[] = [];
  page.on('request', (request) => {
    const path = new URL(request.url()).pathname;
    if (path === '/api/v1/mailbox' || path === '/api/v1/events' || path === '/') asked.push(request.url());
  });
  const sent = performance.now();
  await send({ subject: 'Live one', text: 'hello' });
  await expect(page.getByRole('option', { name: /Live one/ })).toBeVisible();
  test.info().annotations.push({ type: 'listed after the 250', description: `${Math.round(performance.now() - sent)} ms` });
  expect(await page.evaluate('window.sameDocument')).toBe(true);
  expect(asked, 'requests for the mailbox, the stream or the page after the mail was sent').toEqual([]);
  // And in the mailbox index, with its count.
  await expect(page.getByRole('navigation', { name: 'Mailboxes' }).getByRole('link', { name: new RegExp(mailbox.replace(/[.+]/g, '\\$&')) })).toContainText(
    '1',
  );
});

test('opens a mail: its HTML in a sandboxed frame, where neither a <script> nor an onerror handler runs', async ({ page, mailbox, send }) => {
  const blocked: string[] = [];
  page.on('console', (message) => {
    if (/Blocked script execution in 'about:srcdoc'/.test(message.text())) blocked.push(message.text());
  });
  await send({
    subject: 'Scripted',
    text: 'text part',
    html: [
      '<p id="body">Body of the mail</p>',
      '<script>document.body.dataset.ran = "script"</script>',
      '<img src="data:," onerror="document.body.dataset.ran = \'handler\'" alt="">',
      '<form action="/steal"><button>Send</button></form>',
    ].join(''),
  });
  await page.getByRole('option', { name: /Scripted/ }).click();

  const frame = page.locator('iframe[title="HTML of “Scripted”"]');
  await expect(frame).toHaveAttribute('sandbox', 'allow-popups allow-popups-to-escape-sandbox');
  const body = page.frameLocator('iframe[title="HTML of “Scripted”"]').locator('body');
  await expect(body.getByText('Body of the mail')).toBeVisible();
  // Chromium says it refused them; and neither left its mark.
  await expect.poll(() => blocked.length).toBeGreaterThanOrEqual(2);
  await expect(body).not.toHaveAttribute('data-ran');
  // The URL names the message, so it can be shared and reloaded.
  expect(new URL(page.url()).searchParams.get('address')).toBe(mailbox);
  expect(new URL(page.url()).searchParams.get('id')).toMatch(/^[0-9a-z]{11}$/);
});

test('a remote image is not fetched until the person allows it', async ({ page, mailbox, send, remote }) => {
  const refused: string[] = [];
  page.on('console', (message) => {
    // Chromium's words for a CSP refusal: "Loading the image 'URL' violates the following Content Security Policy directive".
    const url = /(?:Loading|Refused to load) the image '([^']+)'/.exec(message.text())?.[1];
    if (url) refused.push(url);
  });
  await send({
    subject: 'Tracked',
    html: `<p>Hello</p><img src="${remote.url}/pixel.gif" alt="pixel"><div style="background:url(${remote.url}/bg.gif)">x</div>`,
  });
  await page.getByRole('option', { name: /Tracked/ }).click();
  const frame = page.frameLocator('iframe[title="HTML of “Tracked”"]');
  await expect(frame.getByText('Hello')).toBeVisible();
  await expect(page.getByText('Remote images are blocked.')).toBeVisible();
  // Read only once Chromium has decided about both images (its CSP refusals,
  // one per image): a request still in flight would pass a count read at once.
  await expect.poll(() => refused.filter((url) => url.startsWith(remote.url)).sort()).toEqual([`${remote.url}/bg.gif`, `${remote.url}/pixel.gif`]);
  expect(remote.hits('/pixel.gif')).toBe(0);
  expect(remote.hits('/bg.gif')).toBe(0);

  await page.getByRole('button', { name: 'Show remote images' }).click();
  await expect.poll(() => remote.hits('/pixel.gif')).toBe(1);
  await expect.poll(() => remote.hits('/bg.gif')).toBe(1);
  await expect(frame.getByRole('img', { name: 'pixel' })).toBeVisible();
  expect(new URL(page.url()).searchParams.get('address')).toBe(mailbox);
});

test('a mail’s <link>, <base> and <meta http-equiv> fetch nothing when it is opened: no prefetch, prerender, preload or stylesheet', async ({
  page,
  inbox,
  send,
  remote,
}) => {
  const links = ['prefetch', 'prerender', 'preload', 'preconnect', 'dns-prefetch', 'modulepreload', 'stylesheet', 'icon']
    .map((rel) => `<link rel="${rel}" href="${remote.url}/${rel}"${rel === 'preload' ? ' as="fetch" crossorigin' : ''}>`)
    .join('');
  await send({
    subject: 'Read receipt',
    html: [
      `<head><base href="${remote.url}/base/"><meta http-equiv="refresh" content="0; url=${remote.url}/refresh">${links}</head>`,
      '<body><p id="marker">Your order has shipped.</p>',
      `<svg><foreignObject><link rel="prefetch" href="${remote.url}/svg-foreign"></foreignObject></svg>`,
      `<noscript><link rel="prefetch" href="${remote.url}/noscript"></noscript>`,
      `<iframe srcdoc="<link rel=prefetch href=${remote.url}/nested-srcdoc>"></iframe>`,
      `<div><template shadowrootmode="open"><link rel="prefetch" href="${remote.url}/shadow"><slot></slot></template>in a shadow root</div>`,
      '</body>',
    ].join(''),
  });
  await page.goto(`${API_URL}/?address=${encodeURIComponent(inbox.address)}`);
  await page.getByRole('option', { name: /Read receipt/ }).click();
  const frame = page.frameLocator('iframe[title="HTML of “Read receipt”"]');
  await expect(frame.getByText('Your order has shipped.')).toBeVisible();
  await expect(frame.getByText('in a shadow root')).toBeVisible();
  // A fair chance for anything the frame would fetch: a request of our own,
  // through the same browser, sent after the frame is drawn, has arrived.
  const control = await page.context().newPage();
  await control.goto(`${remote.url}/control`);
  await control.close();
  expect(remote.paths()).toEqual(['/control']);
  // What is left is ours (Playwright's CSS reaches into the open shadow root too).
  expect(
    await frame.locator('link, base, meta').evaluateAll((found) => found.map((element) => (element as unknown as { outerHTML: string }).outerHTML)),
  ).toEqual(['<meta http-equiv="Content-Security-Policy" content="img-src data: blob:">', '<base target="_blank">']);
});

test('an inline (cid:) image is shown from the mail itself, with remote images still blocked', async ({ page, mailbox, send }) => {
  const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
  await send({
    subject: 'Inline',
    html: '<p>Logo:</p><img src="cid:logo@acme" alt="logo" width="20" height="20">',
    attachments: [{ filename: 'logo.gif', content: gif, cid: 'logo@acme', contentType: 'image/gif' }],
  });
  await page.getByRole('option', { name: /Inline/ }).click();
  const logo = page.frameLocator('iframe[title="HTML of “Inline”"]').getByRole('img', { name: 'logo' });
  await expect(logo).toHaveAttribute('src', /^data:image\/gif;base64,/);
  // Loaded: a broken image has no natural width.
  await expect.poll(() => logo.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
  expect(new URL(page.url()).searchParams.get('address')).toBe(mailbox);
});

test('shows the text, the headers, the raw source and the attachments (downloaded)', async ({ page, mailbox, send }) => {
  await send({ subject: 'Everything', text: 'The text part', html: '<p>html</p>', attachments: [{ filename: 'invoice.txt', content: 'invoice body' }] });
  await page.getByRole('option', { name: /Everything/ }).click();
  // The head gives the date and the zone in full; the list's short time gives them when pointed at.
  const year = String(new Date().getFullYear());
  await expect(page.locator('.message-head time')).toHaveText(new RegExp(`${year}\\D.*\\d\\d:\\d\\d:\\d\\d.*\\b(UTC|GMT|[A-Z]{3,4})\\b`));
  await expect(page.getByRole('option', { name: /Everything/ }).locator('time')).toHaveAttribute('title', new RegExp(year));

  await page.getByRole('tab', { name: 'Text' }).click();
  await expect(page.getByRole('tabpanel')).toContainText('The text part');
  await page.getByRole('tab', { name: 'Headers' }).click();
  await expect(page.getByRole('row', { name: /^subject Everything$/ })).toBeVisible();
  await page.getByRole('tab', { name: 'Raw' }).click();
  await expect(page.getByLabel('Raw source')).toContainText(`To: ${mailbox}`);
  await expect(page.getByLabel('Raw source')).toContainText('Subject: Everything');

  await page.getByRole('tab', { name: 'Attachments (1)' }).click();
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Download' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('invoice.txt');
  const stream = await file.createReadStream();
  let content = '';
  for await (const chunk of stream) content += String(chunk);
  expect(content).toBe('invoice body');
});

test('deletes a message, and empties the mailbox after a second click', async ({ page, mailbox, send, inbox }) => {
  for (const subject of ['First', 'Second', 'Third']) await send({ subject, text: subject });
  await expect(page.getByRole('option')).toHaveCount(3);
  await page.getByRole('option', { name: /Second/ }).click();
  await page.getByRole('button', { name: 'Delete' }).click();
  await expect(page.getByRole('option')).toHaveCount(2);
  expect((await inbox.messages()).map((m) => m.subject).sort()).toEqual(['First', 'Third']);

  await page.getByRole('button', { name: 'Empty mailbox' }).click();
  await page.getByRole('button', { name: 'Really delete all 2?' }).click();
  await expect(page.getByText(`No mail for ${mailbox} yet`)).toBeVisible();
  expect(await inbox.messages()).toEqual([]);
});

test('keyboard: j and k move through the messages, Escape goes back', async ({ page, mailbox, send }) => {
  for (const subject of ['Old', 'Middle', 'New']) await send({ subject, text: subject });
  await expect(page.getByRole('option')).toHaveCount(3);
  await page.keyboard.press('j');
  await expect(page.getByRole('option', { name: /New/ })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByRole('heading', { name: 'New' })).toBeVisible();
  await page.keyboard.press('j');
  await expect(page.getByRole('option', { name: /Middle/ })).toHaveAttribute('aria-selected', 'true');
  await page.keyboard.press('k');
  await expect(page.getByRole('heading', { name: 'New' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByText('Pick a message to read it.')).toBeVisible();
  expect(new URL(page.url()).searchParams.get('address')).toBe(mailbox);
});

test('the deep link /?address=A opens that mailbox, and the search finds it in the index', async ({ page, inbox, send }) => {
  await send({ subject: 'Deep', text: 'x' });
  await page.goto(`${API_URL}/?address=${encodeURIComponent(inbox.address)}`);
  await expect(page.getByRole('heading', { name: inbox.address })).toBeVisible();
  await expect(page.getByRole('option', { name: /Deep/ })).toBeVisible();

  await page.goto(`${API_URL}/`);
  await page.getByLabel('Search mailboxes').fill(inbox.address.split('@')[0]!);
  const found = page.getByRole('navigation', { name: 'Mailboxes' }).getByRole('link');
  await expect(found).toHaveCount(1);
  await found.click();
  await expect(page.getByRole('option', { name: /Deep/ })).toBeVisible();
});

test('at 360 px wide: one pane at a time, nothing wider than the screen', async ({ page, mailbox, send }) => {
  await page.setViewportSize({ width: 360, height: 740 });
  await send({ subject: 'Small screen', html: '<p>Narrow</p>' });
  await page.getByRole('option', { name: /Small screen/ }).click();
  await expect(page.getByRole('navigation', { name: 'Mailboxes' })).toBeHidden();
  await expect(page.getByRole('heading', { name: 'Small screen' })).toBeVisible();
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  await page.getByRole('button', { name: '← Messages' }).click();
  await expect(page.getByRole('heading', { name: mailbox })).toBeVisible();
  await page.getByRole('button', { name: '← Mailboxes' }).click();
  await expect(page.getByRole('navigation', { name: 'Mailboxes' })).toBeVisible();
});

test('the SMTP attempts tab shows the deferral lab’s log for the address', async ({ page, mailbox, send, inbox }) => {
  await inbox.smtp.defer({ times: 1 });
  await expect(send({ subject: 'Deferred', text: 'x' })).rejects.toThrow(/451/);
  await send({ subject: 'Deferred', text: 'x' });
  await page.getByRole('option', { name: /Deferred/ }).click();
  await page.getByRole('tab', { name: 'SMTP attempts' }).click();
  const rows = page.getByRole('table', { name: `SMTP attempts to ${mailbox}` }).getByRole('row');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(1)).toContainText('deferred');
  await expect(rows.nth(2)).toContainText('accepted');
});

test('the webhook deliveries tab shows what each webhook hearing the address was sent, with every attempt', async ({ page, mailbox, send, inbox, request }) => {
  // The demo app's support desk fails the first attempt, then takes it.
  await request.post(`${APP_URL}/api/support/fail-next`, { data: { address: mailbox, times: 1, status: 503 } });
  const retry = { maxAttempts: 5, initialDelayMs: 200, factor: 2, maxDelayMs: 2_000 };
  const hook = await inbox.webhooks.add({ url: `${APP_URL}/webhooks/mail`, secret: DEMO_WEBHOOK_SECRET, events: ['message.received'], retry });
  await send({ subject: 'Hooked', text: 'x' });
  await expect(hook).toHaveDelivered('message.received', { attempts: 2 });
  await page.getByRole('option', { name: /Hooked/ }).click();
  await page.getByRole('tab', { name: 'Webhook deliveries' }).click();
  const rows = page.getByRole('table', { name: `Webhook deliveries to ${APP_URL}/webhooks/mail` }).getByRole('row');
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(1)).toContainText('message.received');
  await expect(rows.nth(1)).toContainText('delivered');
  await expect(rows.nth(1).getByRole('listitem')).toHaveText([/^#1 503 retrying after .* ms, next in \d+ ms$/, /^#2 200 delivered after .* ms$/]);
});

test('with --token: the page asks for it, refuses a wrong one, and the API stays closed without it', async ({ page }) => {
  const server = await startServer({ smtpPort: 0, httpPort: 0, token: 'ui-s3cret' });
  try {
    const transport = createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'a@example.com', to: 'locked@mailroom.test', subject: 'Behind the token', text: 'x' });
    transport.close();
    expect((await page.request.get(`${server.apiURL}/api/v1/mailboxes`)).status()).toBe(401);
    expect((await page.request.get(`${server.apiURL}/api/v1/events`)).status()).toBe(401);

    await page.goto(`${server.apiURL}/`);
    await page.getByLabel('Token').fill('wrong');
    await page.getByRole('button', { name: 'Open' }).click();
    await expect(page.getByRole('alert')).toHaveText('That token was refused.');
    await page.getByLabel('Token').fill('ui-s3cret');
    await page.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('link', { name: /locked@mailroom\.test/ }).click();
    await expect(page.getByRole('option', { name: /Behind the token/ })).toBeVisible();
    await expect(page.getByRole('status').filter({ hasText: 'Live' })).toBeVisible();
    // Kept for the tab: a reload does not ask again.
    await page.reload();
    await expect(page.getByRole('option', { name: /Behind the token/ })).toBeVisible();
  } finally {
    await server.close();
  }
});
