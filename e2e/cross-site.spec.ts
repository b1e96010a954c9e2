// Issue 26 in real Chromium: a page the developer visits cannot steer the
// mailroom server running beside the browser. The "evil" pages are served
// by a small HTTP server of this spec on another port: once as
// http://127.0.0.1:PORT (same site as the server, another origin: only the
// Origin check stands in the way) and once as http://localhost:PORT (another
// site). Each tries what a page can send without a preflight (a no-cors text
// POST, a form POST) and a fetch with a JSON body, at the webhook API and
// at /mcp. Nothing is registered and no answer carries mail.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTransport } from 'nodemailer';
import { startServer } from 'mailroomjs/server';
import { test as base, expect } from 'mailroomjs/playwright';
import { API_URL, SMTP_PORT } from './servers.js';

/** A page that throws everything it can at the mailroom API, then says what its own fetches saw. */
function attackPage(hookUrl: string, address: string): string {
  const webhook = JSON.stringify({ url: hookUrl });
  const mcp = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_messages', arguments: { address } } });
  return `<!doctype html><meta charset="utf-8"><title>evil</title>
<iframe name="sink"></iframe>
<form id="hook" method="POST" action="${API_URL}/api/v1/webhooks" target="sink" enctype="text/plain"><input name='${webhook.slice(0, -1)}, "x": "' value='"}'></form>
<form id="mcp" method="POST" action="${API_URL}/mcp" target="sink" enctype="text/plain"><input name='${mcp.slice(0, -1)}, "x": "' value='"}'></form>
<script>
window.results = (async () => {
  const seen = [];
  const attempt = async (what, url, init) => {
    try {
      const response = await fetch(url, init);
      seen.push({ what, type: response.type, status: response.status, text: response.type === 'opaque' ? '' : await response.text() });
    } catch (error) {
      seen.push({ what, error: String(error) });
    }
  };
  await attempt('no-cors webhook', '${API_URL}/api/v1/webhooks', { method: 'POST', mode: 'no-cors', body: ${JSON.stringify(webhook)} });
  await attempt('json webhook', '${API_URL}/api/v1/webhooks', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(webhook)} });
  await attempt('no-cors mcp', '${API_URL}/mcp', { method: 'POST', mode: 'no-cors', body: ${JSON.stringify(mcp)} });
  await attempt('json mcp', '${API_URL}/mcp', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: ${JSON.stringify(mcp)} });
  await attempt('cors read', '${API_URL}/api/v1/mailbox?address=' + encodeURIComponent(${JSON.stringify(address)}), {});
  for (const form of ['hook', 'mcp']) {
    const sink = document.querySelector('iframe');
    const loaded = new Promise((resolve) => sink.addEventListener('load', resolve, { once: true }));
    document.getElementById(form).submit();
    await loaded;
  }
  return seen;
})();
</script>`;
}

const test = base.extend<{ evil: { serve(page: string): void; port: number } }>({
  evil: async ({}, use) => {
    let page = '';
    const server: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(page);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    await use({ serve: (html) => void (page = html), port: (server.address() as AddressInfo).port });
    server.close();
  },
});

for (const host of ['127.0.0.1', 'localhost']) {
  test(`a page on ${host}, another port, registers no webhook and reads no mail through the API or /mcp`, async ({ page, inbox, evil }) => {
    const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
    const secret = `one-time code ${Math.random().toString(36).slice(2)}`;
    await transport.sendMail({ from: 'app@acme.example', to: inbox.address, subject: secret, text: secret });
    transport.close();
    await inbox.expectMail({ subject: secret });

    const hookUrl = `https://evil.example/c/${Math.random().toString(36).slice(2)}`;
    evil.serve(attackPage(hookUrl, inbox.address));
    // What the server really answered, opaque responses and form posts included (the page itself cannot see these).
    const answered: { url: string; status: number; body: string }[] = [];
    page.on('response', async (response) => {
      if (!response.url().startsWith(API_URL)) return;
      answered.push({ url: response.url(), status: response.status(), body: await response.text().catch(() => '') });
    });
    await page.goto(`http://${host}:${evil.port}/`);
    const seen = await page.evaluate<{ what: string; status?: number; error?: string; text?: string }[]>('window.results');

    // The page's own view: opaque answers, failed preflights, no readable mail.
    expect(seen.map((s) => s.what)).toEqual(['no-cors webhook', 'json webhook', 'no-cors mcp', 'json mcp', 'cors read']);
    for (const s of seen) expect(s.text ?? '', s.what).not.toContain(secret);
    // The server's: every request that reached it was refused.
    // Chromium reports the two form posts for sure (the fetches it blocks it may not report).
    await expect.poll(() => answered.filter((a) => a.url.endsWith('/webhooks') || a.url.endsWith('/mcp')).length).toBeGreaterThanOrEqual(2);
    for (const a of answered) {
      expect([403, 415], `${a.url} answered ${a.status}`).toContain(a.status);
      expect(a.body).not.toContain(secret);
    }
    const { webhooks } = (await (await fetch(`${API_URL}/api/v1/webhooks`)).json()) as { webhooks: { url: string }[] };
    expect(webhooks.map((w) => w.url)).not.toContain(hookUrl);
  });
}

test('a page on another port of the same host (same site) starts no GET through an <img>: the API refuses each, and the UI page still opens from it', async ({
  page,
  evil,
}) => {
  // A server of this test's own, so its request counters say what got past the edge.
  const server = await startServer({ smtpPort: 0, httpPort: 0 });
  try {
    const address = 'samesite@mailroom.test';
    const transport = createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'app@acme.example', to: address, subject: 'Reset', html: '<p>code 123456</p>' });
    transport.close();
    const { messages } = (await (await fetch(`${server.apiURL}/api/v1/mailbox?address=${address}`)).json()) as { messages: { id: string }[] };
    const id = messages[0]!.id;
    const mailbox = `mailbox=${encodeURIComponent(address)}`;
    const gets = [
      `/api/v1/mailbox?address=${encodeURIComponent(address)}`,
      `/api/v1/message/${id}?${mailbox}`,
      `/api/v1/message/${id}/raw?${mailbox}`,
      `/api/v1/message/${id}/checks?${mailbox}`,
    ];
    evil.serve(
      `<!doctype html><title>same site</title>${gets.map((path) => `<img src="${server.apiURL}${path}" alt="">`).join('')}<a href="${server.apiURL}/">mail</a>`,
    );
    const answered: string[] = [];
    page.on('response', (response) => {
      if (response.url().startsWith(server.apiURL)) answered.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    const before = server.stats(address);
    // `load` waits for every image to be answered or refused.
    await page.goto(`http://127.0.0.1:${evil.port}/`, { waitUntil: 'load' });
    expect(server.stats(address)).toEqual(before);
    for (const line of answered) expect(line).toMatch(/^403 /);
    // The server's own UI page opens from a link there (a navigation), and the person reading it is served.
    await page.getByRole('link', { name: 'mail' }).click();
    await expect(page).toHaveURL(`${server.apiURL}/`);
    await expect(page.getByRole('navigation', { name: 'Mailboxes' }).getByRole('link', { name: /samesite@mailroom\.test/ })).toBeVisible();
    // Control: a request the counters do count, the same GET typed in the address bar.
    await page.goto(`${server.apiURL}${gets[0]}`);
    expect(server.stats(address).list).toBe(before.list + 1);
  } finally {
    await server.close();
  }
});

test('a link in a mail opens in a new tab that works and has no handle on the mailroom tab', async ({ page, inbox, evil }) => {
  evil.serve('<!doctype html><title>landing</title><script>document.title = "ran:" + (window.opener === null ? "no-opener" : "opener")</script>');
  const transport = createTransport({ host: '127.0.0.1', port: SMTP_PORT, secure: false, ignoreTLS: true });
  const landing = `http://localhost:${evil.port}/landing`;
  await transport.sendMail({
    from: 'app@acme.example',
    to: inbox.address,
    subject: 'Tabnabbing',
    html: `<p><a id="go" href="${landing}" target="_blank" rel="opener">Reset your password</a></p>`,
  });
  transport.close();
  await page.goto(`${API_URL}/?address=${encodeURIComponent(inbox.address)}`);
  await page.getByRole('option', { name: /Tabnabbing/ }).click();
  const [opened] = await Promise.all([
    page.context().waitForEvent('page'),
    page.frameLocator('iframe[title="HTML of “Tabnabbing”"]').getByRole('link', { name: 'Reset your password' }).click(),
  ]);
  await opened.waitForLoadState();
  // The site runs (scripts on: the link is useful), and window.opener is null there.
  await expect.poll(() => opened.title()).toBe('ran:no-opener');
  expect(await opened.evaluate('window.opener === null')).toBe(true);
});
