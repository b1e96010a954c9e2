// openMail: a received mail shown in the test's own page, its links followed
// by role in the same browser context, its scripts never run. The mail goes
// through the e2e mailroom server over real SMTP; the "app" whose cookie
// must survive the click is a small HTTP server on a real socket.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTransport } from 'nodemailer';
import { test as base, expect, openMail, MAIL_ORIGIN } from 'mailroomjs/playwright';
import { SMTP_PORT } from './servers.js';

interface App {
  readonly url: string;
  /** Every path the app was asked for, with the cookie header it came with. */
  readonly hits: { path: string; cookie: string | undefined }[];
}

type Send = (mail: {
  subject: string;
  html?: string;
  text: string;
  attachments?: { filename: string; content: Buffer; cid?: string; contentType?: string }[];
}) => Promise<void>;

const test = base.extend<{ app: App; send: Send }>({
  app: async ({}, use) => {
    const hits: App['hits'] = [];
    const server: Server = createServer((req, res) => {
      const path = req.url ?? '/';
      hits.push({ path, cookie: req.headers.cookie });
      if (path === '/login') {
        res.writeHead(200, { 'content-type': 'text/html', 'set-cookie': 'session=s3cret; Path=/; HttpOnly; SameSite=Lax' });
        res.end('<!doctype html><title>Logged in</title><h1>Logged in</h1>');
        return;
      }
      const session = /(?:^|; )session=([^;]*)/.exec(req.headers.cookie ?? '')?.[1];
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Landed</title><h1>Landed on ${path.replace(/[^\w/?=-]/g, '')}</h1><p>session: ${session ?? 'none'}</p>`);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await use({ url: `http://127.0.0.1:${port}`, hits });
    server.close();
  },
  send: async ({ inbox }, use) => {
    const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
    await use(async (mail) => {
      await transport.sendMail({ from: 'Acme <hello@acme.example>', to: inbox.address, ...mail });
    });
    transport.close();
  },
});

test('a link in the HTML is clicked by its name, in the same context, with the cookie the app set', async ({ page, inbox, app, send }) => {
  await page.goto(`${app.url}/login`);
  await send({
    subject: 'Confirm your email',
    text: `Confirm: ${app.url}/confirm?token=t1`,
    html: `<p>Hello</p><p><a href="${app.url}/confirm?token=t1">Confirm your email</a></p><p><a href="${app.url}/other" style="display:none">Hidden</a></p>`,
  });
  const mail = await inbox.expectMail({ subject: 'Confirm' });

  await openMail(page, mail);
  expect(new URL(page.url()).origin).toBe(MAIL_ORIGIN);
  // A hidden link is not a link a person can click.
  await expect(page.getByRole('link', { name: 'Hidden' })).toBeHidden();
  await page.getByRole('link', { name: 'Confirm your email' }).click();

  await expect(page.getByRole('heading', { name: 'Landed on /confirm?token=t1' })).toBeVisible();
  await expect(page.getByText('session: s3cret')).toBeVisible();
  expect(app.hits.find((h) => h.path === '/confirm?token=t1')?.cookie).toBe('session=s3cret');
});

test('scripts in a mail never run: an inline script, an onerror handler, a javascript: link', async ({ page, inbox, send }) => {
  await send({
    subject: 'Scripted',
    text: 'This mail has scripts.',
    html: [
      '<title>Scripted</title>',
      '<script>document.title = "script ran"</script>',
      '<img src="data:," onerror="document.title = \'handler ran\'" alt="broken">',
      '<a href="javascript:document.title = \'link ran\'">Run</a>',
      '<p>Body text</p>',
    ].join(''),
  });
  const mail = await inbox.expectMail({ subject: 'Scripted' });
  // The test's own listener (Playwright's init scripts are not the page's, so the policy does not stop them):
  // every refusal the policy makes is an event with the directive it broke.
  // (A string: the project's types have no DOM.)
  await page.addInitScript({
    content: `window.refused = []; document.addEventListener('securitypolicyviolation', (e) => window.refused.push(e.effectiveDirective + ' ' + e.sample));`,
  });
  const refused = () => page.evaluate<string[]>('window.refused');
  let documentPolicy: string | undefined;
  page.on('response', (response) => {
    if (response.request().isNavigationRequest()) documentPolicy = response.headers()['content-security-policy'];
  });

  await openMail(page, mail);
  await expect(page.getByText('Body text')).toBeVisible();
  await page.getByRole('link', { name: 'Run' }).click();
  // Each was refused: the inline script, the handler, the javascript: URL.
  await expect.poll(async () => (await refused()).length).toBeGreaterThanOrEqual(3);
  expect((await refused()).every((entry) => entry.startsWith('script-src'))).toBe(true);
  expect(await page.title()).toBe('Scripted');
  expect(documentPolicy).toContain("script-src 'none'");
});

test('a text-only mail is shown as text, its URLs as links', async ({ page, inbox, app, send }) => {
  await send({ subject: 'Plain', text: `Hi <b>there</b>,\n\nReset your password: ${app.url}/reset?k=9\n\nThe Acme team` });
  const mail = await inbox.expectMail({ subject: 'Plain' });
  expect(mail.html).toBe('');

  await openMail(page, mail);
  // The markup in the text is text, not markup.
  await expect(page.getByText('Hi <b>there</b>,')).toBeVisible();
  await page.getByRole('link', { name: `${app.url}/reset?k=9` }).click();
  await expect(page.getByRole('heading', { name: 'Landed on /reset?k=9' })).toBeVisible();
});

test('going back to a mail shows it again', async ({ page, inbox, app, send }) => {
  await send({ subject: 'Twice', text: 'x', html: `<a href="${app.url}/one">One</a>` });
  await openMail(page, await inbox.expectMail({ subject: 'Twice' }));
  await page.getByRole('link', { name: 'One' }).click();
  await expect(page.getByRole('heading', { name: 'Landed on /one' })).toBeVisible();
  await page.goBack();
  await expect(page.getByRole('link', { name: 'One' })).toBeVisible();
});

test('inline (cid:) images are shown from the mail itself; an unknown cid: stays broken', async ({ page, inbox, send }) => {
  // A 2x3 PNG: its natural size proves these bytes were shown, not any image.
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAAAAACcgYFdAAAAC0lEQVR4nGNggAIAAAkAAftSuKkAAAAASUVORK5CYII=', 'base64');
  await send({
    subject: 'Logo',
    text: 'Logo',
    html: '<p>Logo:</p><img src="cid:logo@acme" alt="logo"><img src="cid:missing@acme" alt="missing">',
    attachments: [{ filename: 'logo.png', content: png, cid: 'logo@acme', contentType: 'image/png' }],
  });
  await openMail(page, await inbox.expectMail({ subject: 'Logo' }));
  const size = (name: string) =>
    page.getByRole('img', { name }).evaluate((img) => {
      const image = img as unknown as { naturalWidth: number; naturalHeight: number };
      return `${image.naturalWidth}x${image.naturalHeight}`;
    });
  await expect.poll(() => size('logo')).toBe('2x3');
  // Read once Chromium is done with it: an image still loading is 0x0 too.
  await expect.poll(() => page.getByRole('img', { name: 'missing' }).evaluate((img) => (img as unknown as { complete: boolean }).complete)).toBe(true);
  expect(await size('missing')).toBe('0x0');
  expect(await page.getByRole('img', { name: 'logo' }).getAttribute('src')).toMatch(/^\/mail\/\d+\/[^/]+\/cid\/logo%40acme$/);
});

// Browser code as text: this project's types have no DOM.
const colours = (selector: string) =>
  `(() => { const s = getComputedStyle(document.querySelector(${JSON.stringify(selector)})); return s.color + ' on ' + s.backgroundColor; })()`;

test("dark mode: the mail's own dark styles apply, and a mail that declares no color scheme gets a dark canvas", async ({ page, inbox, send }) => {
  await send({
    subject: 'Styled',
    text: 'Styled',
    html: [
      '<!doctype html><html><head><meta name="color-scheme" content="light dark">',
      '<style>.card{color:#111111;background:#ffffff} @media (prefers-color-scheme: dark){.card{color:#eeeeee;background:#222222}}</style>',
      '</head><body><div class="card">Your order</div></body></html>',
    ].join(''),
  });
  const styled = await inbox.expectMail({ subject: 'Styled' });
  await openMail(page, styled);
  expect(await page.evaluate<string>(colours('.card'))).toBe('rgb(17, 17, 17) on rgb(255, 255, 255)');
  await openMail(page, styled, { colorScheme: 'dark' });
  expect(await page.evaluate<string>(colours('.card'))).toBe('rgb(238, 238, 238) on rgb(34, 34, 34)');
  expect(await page.evaluate<boolean>("matchMedia('(prefers-color-scheme: dark)').matches")).toBe(true);

  // No color scheme declared: Apple Mail's default, light text on a dark canvas (the default text is
  // white only when the canvas is dark); but a mail that asks for light only stays light.
  await send({ subject: 'Plain HTML', text: 'Hello', html: '<p>Hello</p>' });
  await send({
    subject: 'Light only',
    text: 'Hello',
    html: '<html><head><meta name="color-scheme" content="light only"></head><body><p>Hello</p></body></html>',
  });
  await openMail(page, await inbox.expectMail({ subject: 'Plain HTML' }), { colorScheme: 'dark' });
  expect(await page.evaluate<string>(colours('p'))).toBe('rgb(255, 255, 255) on rgba(0, 0, 0, 0)');
  await openMail(page, await inbox.expectMail({ subject: 'Light only' }), { colorScheme: 'dark' });
  expect(await page.evaluate<string>(colours('p'))).toBe('rgb(0, 0, 0) on rgba(0, 0, 0, 0)');
  // Light again when asked: the page keeps what it was last given.
  await openMail(page, styled, { colorScheme: 'light' });
  expect(await page.evaluate<string>(colours('.card'))).toBe('rgb(17, 17, 17) on rgb(255, 255, 255)');
});

test("a phone's width: the mail is laid out 375 px wide and its narrow-screen rules apply; or any width asked for", async ({ page, inbox, send }) => {
  await send({
    subject: 'Columns',
    text: 'Columns',
    html: '<style>.col{display:inline-block;width:280px} @media (max-width: 480px){.col{display:block;width:auto}}</style><div class="col">Left</div><div class="col">Right</div>',
  });
  const mail = await inbox.expectMail({ subject: 'Columns' });
  const layout = "(() => [innerWidth, innerHeight, getComputedStyle(document.querySelector('.col')).display].join(' '))()";
  await openMail(page, mail);
  expect(await page.evaluate<string>(layout)).toBe('1280 720 inline-block');
  await openMail(page, mail, { width: 'phone' });
  expect(await page.evaluate<string>(layout)).toBe('375 667 block');
  await openMail(page, mail, { width: 600 });
  expect(await page.evaluate<string>(layout)).toBe('600 667 inline-block');
  await expect(openMail(page, mail, { width: 'tablet' as never })).rejects.toThrow(
    'Expected `openMail` option `width` to be "phone" or a whole number of CSS pixels, got "tablet"',
  );
  await expect(openMail(page, mail, { colorScheme: 'dim' as never })).rejects.toThrow(
    'Expected `openMail` option `colorScheme` to be "light" or "dark", got "dim"',
  );
});
