// `/api/v1/message/{id}/checks`: the web UI's Checks tab asks the server for
// the same report `mail.check()` gives. A GET runs the checks that fetch
// nothing; the links check is a POST of `{"links": true}` (an action on
// third parties, under the edge's rules for one), and reaches loopback and
// private hosts only when `linkCheckAllow` lists them (security review 2,
// finding 3). The links point at a real loopback server that logs what
// reaches it. Checks that run past the server's `checksTimeout` are stopped
// and refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { freePort } from '../support/free-port.js';
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

const JSON_TYPE = { 'content-type': 'application/json' };
const LINKS = JSON.stringify({ links: true });

/** A mail with these links, delivered; its id. */
async function mailWith(server: MailroomServer, address: string, html: string): Promise<string> {
  await sendMail(server, { to: address, subject: 'Order', html });
  return ((await call(server, listPath(address))).json.messages[0] as { id: string }).id;
}

describe('GET|POST /api/v1/message/{id}/checks', () => {
  it('answers the checks without links to a GET, and with them to a POST of {"links": true}', async () => {
    const server = await start({ linkCheckAllow: ['127.0.0.1'] });
    const address = freshAddress();
    const id = await mailWith(server, address, `<p><a href="${siteURL}/gone">Your order</a> <img src="https://acme.example/x.png"></p>`);
    hits.length = 0;

    const quick = await call(server, messagePath(id, address, '/checks'));
    expect(quick.status).toBe(200);
    expect(quick.json).toMatchObject({ ok: false, checked: ['html', 'images', 'size', 'text'] });
    expect(quick.json.problems.map((p: { check: string }) => p.check)).toEqual(['images', 'text']);
    expect(hits).toEqual([]);

    const full = await call(server, messagePath(id, address, '/checks'), { method: 'POST', headers: JSON_TYPE, body: LINKS });
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

  // Finding 3: the report said "connection refused" for a closed port and a status for an open one, from the server's host.
  it('refuses loopback links by default, in the same words for an open port, a closed one and a name, and reaches nothing', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/admin`;
    const byName = `${siteURL.replace('127.0.0.1', 'localhost')}/ok`;
    const html = `<p><a href="${siteURL}/ok">Open</a> <a href="${closed}">Closed</a> <a href="${byName}">Named</a></p>`;
    const server = await start();
    const address = freshAddress();
    const id = await mailWith(server, address, html);
    hits.length = 0;

    const answer = await call(server, messagePath(id, address, '/checks'), { method: 'POST', headers: JSON_TYPE, body: LINKS });
    const links = (answer.json.problems as { check: string; message: string; severity: string; status?: number }[]).filter((p) => p.check === 'links');
    const refused = "was not checked: refused by the link checker's destination policy.";
    expect(links.map((p) => p.message)).toEqual([
      `The link "Open" → ${siteURL}/ok ${refused}`,
      `The link "Closed" → ${closed} ${refused}`,
      `The link "Named" → ${byName} ${refused}`,
    ]);
    expect(links.every((p) => p.severity === 'warning' && p.status === undefined)).toBe(true);
    expect(hits).toEqual([]);

    // Listed, the app under test's host is checked as before, by its address or its name.
    const allowed = await start({ linkCheckAllow: ['127.0.0.1', 'localhost'] });
    const id2 = await mailWith(allowed, address, html);
    const reached = await call(allowed, messagePath(id2, address, '/checks'), { method: 'POST', headers: JSON_TYPE, body: LINKS });
    expect(reached.json.problems.filter((p: { check: string }) => p.check === 'links').map((p: { message: string }) => p.message)).toEqual([
      `The link "Closed" → ${closed} got no answer: connection refused (ECONNREFUSED).`,
    ]);
    expect(hits).toContain('HEAD /ok');
  });

  // Finding 3 (and 5): a GET with links=1 ran the links check, and a page of another site could send that GET from an <img>.
  it('refuses GET ?links=1 saying to POST, and a POST the edge does not take: text/plain, another origin, cross-site', async () => {
    const server = await start({ linkCheckAllow: ['127.0.0.1'] });
    const address = freshAddress();
    const id = await mailWith(server, address, `<p><a href="${siteURL}/ok">Home</a></p>`);
    const path = messagePath(id, address, '/checks');
    hits.length = 0;

    const asGet = await call(server, `${path}&links=1`);
    expect(asGet.status).toBe(400);
    expect(asGet.json.message).toBe(
      'The links check is asked with a POST: POST /api/v1/message/{id}/checks?mailbox=A with Content-Type: application/json and the body {"links": true}. A GET runs the checks that fetch nothing',
    );
    const plain = await call(server, path, { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8' }, body: LINKS });
    expect([plain.status, plain.json.error]).toEqual([415, 'unsupported_media_type']);
    const foreign = await call(server, path, { method: 'POST', headers: { ...JSON_TYPE, origin: 'http://evil.example' }, body: LINKS });
    expect(foreign.status).toBe(403);
    const crossSite = await call(server, path, { method: 'POST', headers: { ...JSON_TYPE, 'sec-fetch-site': 'cross-site' }, body: LINKS });
    expect(crossSite.status).toBe(403);
    expect(hits).toEqual([]);

    expect((await call(server, path, { method: 'POST', headers: JSON_TYPE, body: LINKS })).json.checked).toContain('links');
    expect(hits).toEqual(['HEAD /ok']);
  });

  it('refuses a links value or a body it does not know, and a message that is not there', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'x', text: 'x' });
    const { id } = (await call(server, listPath(address))).json.messages[0] as { id: string };
    const path = messagePath(id, address, '/checks');
    expect(await call(server, `${path}&links=yes`)).toMatchObject({
      status: 400,
      json: {
        error: 'invalid_request',
        message: expect.stringMatching(/^Expected parameter `links` to be absent \(or 0\), got "yes"; to check the links, POST/),
      },
    });
    const post = (body: string) => call(server, path, { method: 'POST', headers: JSON_TYPE, body });
    expect((await post('{"links": "yes"}')).json.message).toBe('Expected the body to be {"links": true} or {"links": false}, got an object');
    expect((await post('{"links": true, "all": 1}')).json.message).toBe('Expected the body to be {"links": true} or {"links": false}, got the key "all"');
    expect((await post('links')).json.message).toBe('The body must be JSON, like {"links": true}');
    expect((await post('{"links": false}')).json.checked).toEqual(['html', 'images', 'size', 'text']);
    expect((await call(server, messagePath('aaaaaaaaaaa', address, '/checks'))).status).toBe(404);
    expect((await call(server, path, { method: 'DELETE' })).status).toBe(405);
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
