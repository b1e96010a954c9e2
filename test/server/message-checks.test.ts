// `GET /api/v1/message/{id}/checks`: the web UI's Checks tab asks the server
// for the same report `mail.check()` gives; the links are fetched only with
// `links=1` (here from a real loopback server answering 404); checks that run
// past the server's `checksTimeout` are stopped and refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { call, freshAddress, listPath, messagePath, sendMail, start } from './helpers.js';

let site: Server;
let siteURL: string;
const hits: string[] = [];

beforeAll(async () => {
  site = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(req.url === '/ok' ? 200 : 404).end();
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteURL = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => site.close(resolve)));

describe('GET /api/v1/message/{id}/checks', () => {
  it('answers the checks without links, and with them when asked', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Order', html: `<p><a href="${siteURL}/gone">Your order</a> <img src="https://acme.example/x.png"></p>` });
    const { id } = (await call(server, listPath(address))).json.messages[0] as { id: string };

    const quick = await call(server, messagePath(id, address, '/checks'));
    expect(quick.status).toBe(200);
    expect(quick.json).toMatchObject({ ok: false, checked: ['html', 'images', 'size', 'text'] });
    expect(quick.json.problems.map((p: { check: string }) => p.check)).toEqual(['images', 'text']);
    expect(hits).toEqual([]);

    const full = await call(server, `${messagePath(id, address, '/checks')}&links=1`);
    expect(full.json.checked).toEqual(['links', 'html', 'images', 'size', 'text']);
    expect(full.json.problems[0]).toMatchObject({
      check: 'links',
      severity: 'error',
      status: 404,
      text: 'Your order',
      message: `The link "Your order" → ${siteURL}/gone answered 404 Not Found.`,
    });
    expect(hits).toEqual(['HEAD /gone', 'GET /gone']);
  });

  it('refuses a links value it does not know, and a message that is not there', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'x', text: 'x' });
    const { id } = (await call(server, listPath(address))).json.messages[0] as { id: string };
    expect(await call(server, `${messagePath(id, address, '/checks')}&links=yes`)).toMatchObject({
      status: 400,
      json: { error: 'invalid_request', message: 'Expected parameter `links` to be 1 (fetch the links) or 0, got "yes"' },
    });
    expect((await call(server, messagePath('aaaaaaaaaaa', address, '/checks'))).status).toBe(404);
    expect((await call(server, messagePath(id, address, '/checks'), { method: 'DELETE' })).status).toBe(405);
  });

  it("refuses checks that run past the server's checksTimeout with 503 checks_timeout, naming it, and serves on", async () => {
    // No mail is checked in a millisecond: the thread alone takes longer to start.
    const server = await start({ checksTimeout: 1 });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'x', html: '<p>x</p>', text: 'x' });
    const { id } = (await call(server, listPath(address))).json.messages[0] as { id: string };
    expect(await call(server, messagePath(id, address, '/checks'))).toMatchObject({
      status: 503,
      json: {
        error: 'checks_timeout',
        message:
          "The checks of this message did not finish within 1 ms (the server's checksTimeout) and were stopped; a busy server may need a longer timeout, and the links check waits on every link's host",
      },
    });
    expect((await call(server, messagePath(id, address))).status).toBe(200);
  });

  it('takes checksTimeout as a positive number of milliseconds up to ten minutes, 30 s by default', () => {
    expect(resolveServerOptions().checksTimeout).toBe(30_000);
    expect(() => resolveServerOptions({ checksTimeout: 0 })).toThrow(
      'Expected `checksTimeout` to be a positive number of milliseconds, at most 600000 (10 minutes), got 0',
    );
  });
});
