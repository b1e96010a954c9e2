// Issue 26, items 1-3: no web page can steer a local mailroom. A page of
// another origin can send a POST without asking (text/plain, a form) and
// name any Host through DNS rebinding; the edge (src/server/http/edge/)
// refuses both before a request is routed, counted or its token looked at.
import { request as httpRequest, createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { edgePolicyOf } from '../../src/server/http/edge/edge-policy.js';
import { createMcpEndpoint } from '../../src/server/http/mcp/endpoint.js';
import { sdkRebindingOptions } from '../../src/server/http/mcp/dns-rebinding.js';
import type { MailroomServer } from '../../src/server/index.js';
import type { MailTools } from '../../src/mcp/tools.js';
import { call, freshAddress, listPath, sendMail, silentLogger, start } from './helpers.js';

const EVIL = 'http://evil.example';
const MCP_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

/** A request with any Host header (undici would not send a foreign one to a loopback URL as it is). */
function raw(
  port: number,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; json: { error?: string; message?: string } | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        let json;
        try {
          json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error?: string };
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

async function webhooksOf(server: MailroomServer): Promise<unknown[]> {
  return (await call(server, '/api/v1/webhooks')).json.webhooks as unknown[];
}

describe('a cross-site request that changes state', () => {
  it('is refused 415 unsupported_media_type as a no-cors text/plain POST, and registers no webhook', async () => {
    const server = await start();
    // What a page's fetch(url, {method: 'POST', mode: 'no-cors', body}) sends: text/plain, no preflight.
    const answer = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
      body: JSON.stringify({ url: 'https://evil.example/c' }),
    });
    expect(answer.status).toBe(415);
    expect(answer.json).toMatchObject({ error: 'unsupported_media_type' });
    expect(answer.json.message).toContain('text/plain');
    expect(await webhooksOf(server)).toEqual([]);
  });

  it('is refused 415 as a form POST to the SMTP rules, the fault switch and /mcp, and with no type at all', async () => {
    const server = await start({ faultInjection: true });
    const address = freshAddress();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const rule = await call(server, `/api/v1/mailbox/rules?address=${encodeURIComponent(address)}`, {
      method: 'POST',
      headers: form,
      body: JSON.stringify({ kind: 'reject' }),
    });
    expect([rule.status, rule.json.error]).toEqual([415, 'unsupported_media_type']);
    expect((await call(server, `/api/v1/mailbox/rules?address=${encodeURIComponent(address)}`)).json.rules).toEqual([]);
    const fault = await call(server, '/_mailroom/faults', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '{}' });
    expect([fault.status, fault.json.error]).toEqual([415, 'unsupported_media_type']);
    const mcp = await call(server, '/mcp', { method: 'POST', headers: { 'content-type': 'text/plain', accept: 'application/json' }, body: MCP_LIST });
    expect([mcp.status, mcp.json.error]).toEqual([415, 'unsupported_media_type']);
    const untyped = await call(server, '/api/v1/webhooks', { method: 'POST', body: JSON.stringify({ url: 'https://evil.example/c' }) });
    expect([untyped.status, untyped.json.error]).toEqual([415, 'unsupported_media_type']);
    expect(await webhooksOf(server)).toEqual([]);
  });

  it('is taken as JSON with a charset, and a DELETE without a body needs no type', async () => {
    const server = await start();
    const added = await call(server, '/api/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    });
    expect(added.status).toBe(201);
    expect((await call(server, listPath(freshAddress()), { method: 'DELETE' })).status).toBe(200);
    const withBody = await call(server, listPath(freshAddress()), { method: 'DELETE', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect([withBody.status, withBody.json.error]).toEqual([415, 'unsupported_media_type']);
  });
});

describe('a request from a page of another origin', () => {
  it('is refused 403 forbidden_origin on every route, JSON body or not, and registers nothing', async () => {
    const server = await start({ faultInjection: true });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'reset', text: 'code 123456' });
    const json = { 'content-type': 'application/json', origin: EVIL };
    const refused = [
      await call(server, '/api/v1/webhooks', { method: 'POST', headers: json, body: JSON.stringify({ url: 'https://evil.example/c' }) }),
      await call(server, listPath(address), { headers: { origin: EVIL } }),
      await call(server, '/api/v1/mailboxes', { headers: { origin: EVIL } }),
      await call(server, listPath(address), { method: 'DELETE', headers: { origin: EVIL } }),
      await call(server, '/_mailroom/faults', { method: 'DELETE', headers: { origin: EVIL } }),
      await call(server, '/mcp', { method: 'POST', headers: { ...json, accept: 'application/json' }, body: MCP_LIST }),
      await call(server, '/healthz', { headers: { origin: 'null' } }),
    ];
    for (const answer of refused) {
      expect([answer.status, answer.json.error]).toEqual([403, 'forbidden_origin']);
    }
    expect(refused[0]!.json.message).toContain('--allow-origin http://evil.example');
    expect(await webhooksOf(server)).toEqual([]);
    expect((await call(server, listPath(address))).json.messages).toHaveLength(1);
  });

  it('is refused 403 when the browser says Sec-Fetch-Site: cross-site, but a navigation to the UI page is served', async () => {
    const server = await start();
    const answer = await call(server, listPath(freshAddress()), { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } });
    expect([answer.status, answer.json.error]).toEqual([403, 'forbidden_origin']);
    const sneaky = await call(server, listPath(freshAddress()), { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
    expect(sneaky.status).toBe(403);
    const page = await call(server, '/', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
    expect(page.status).toBe(200);
  });

  it('is refused 403 when the browser says Sec-Fetch-Site: same-site (a page on another port), but the UI page opens from a link and an allowed origin passes', async () => {
    const server = await start({ allowOrigins: ['http://127.0.0.1:3000'] });
    // What an <img> on http://127.0.0.1:OTHER_PORT sends: no Origin on a GET.
    const img = { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' };
    for (const path of [listPath(freshAddress()), '/api/v1/mailboxes', '/api/v1/mailbox/wait?address=a%40mailroom.test', '/healthz']) {
      const answer = await call(server, path, { headers: img });
      expect([answer.status, answer.json.error], path).toEqual([403, 'forbidden_origin']);
      expect(answer.json.message, path).toContain('Sec-Fetch-Site: same-site');
    }
    const sneaky = await call(server, listPath(freshAddress()), { headers: { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' } });
    expect(sneaky.status).toBe(403);
    const odd = await call(server, listPath(freshAddress()), { headers: { 'sec-fetch-site': 'same-origin, same-site' } });
    expect(odd.status).toBe(403);
    const page = await call(server, '/', { headers: { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'navigate' } });
    expect(page.status).toBe(200);
    const allowed = await call(server, listPath(freshAddress()), { headers: { origin: 'http://127.0.0.1:3000', 'sec-fetch-site': 'same-site' } });
    expect(allowed.status).toBe(200);
    // The UI's own calls, a URL typed in the address bar, and clients that are not browsers.
    for (const site of ['same-origin', 'none', undefined]) {
      const headers: Record<string, string> = site === undefined ? {} : { 'sec-fetch-site': site };
      expect((await call(server, listPath(freshAddress()), { headers })).status, String(site)).toBe(200);
    }
  });

  it('is served from the server’s own origin (any loopback spelling) and from an origin given with allowOrigins', async () => {
    const server = await start({ allowOrigins: ['http://localhost:3000'] });
    for (const origin of [`http://127.0.0.1:${server.httpPort}`, `http://localhost:${server.httpPort}`]) {
      const host = new URL(origin).host;
      const answer = await raw(server.httpPort, '/api/v1/webhooks', {
        method: 'POST',
        headers: { host, origin, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' },
        body: JSON.stringify({ url: 'http://127.0.0.1:9/own' }),
      });
      expect(answer.status, origin).toBe(201);
    }
    const allowed = await call(server, listPath(freshAddress()), { headers: { origin: 'http://localhost:3000', 'sec-fetch-site': 'cross-site' } });
    expect(allowed.status).toBe(200);
    const otherPort = await call(server, listPath(freshAddress()), { headers: { origin: 'http://localhost:3001' } });
    expect(otherPort.status).toBe(403);
  });
});

describe('DNS rebinding', () => {
  it('is refused 403 forbidden_host: a foreign Host on loopback reads no mailbox', async () => {
    const server = await start();
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'secret', text: 'code' });
    const answer = await raw(server.httpPort, listPath(address), { headers: { host: `rebind.evil.example:${server.httpPort}` } });
    expect([answer.status, answer.json?.error]).toEqual([403, 'forbidden_host']);
    expect(answer.json?.message).toContain('--allowed-host rebind.evil.example');
    const mcp = await raw(server.httpPort, '/mcp', {
      method: 'POST',
      headers: { host: 'rebind.evil.example', 'content-type': 'application/json', accept: 'application/json' },
      body: MCP_LIST,
    });
    expect(mcp.status).toBe(403);
    for (const host of [`localhost:${server.httpPort}`, `127.0.0.1:${server.httpPort}`, `[::1]:${server.httpPort}`, 'LOCALHOST']) {
      expect((await raw(server.httpPort, listPath(freshAddress()), { headers: { host } })).status, host).toBe(200);
    }
  });

  it('serves a name given with allowedHosts, over the API and /mcp', async () => {
    const server = await start({ allowedHosts: ['mailroom.internal'] });
    const host = `mailroom.internal:${server.httpPort}`;
    expect((await raw(server.httpPort, listPath(freshAddress()), { headers: { host } })).status).toBe(200);
    const mcp = await raw(server.httpPort, '/mcp', {
      method: 'POST',
      headers: { host, origin: `http://${host}`, 'content-type': 'application/json', accept: 'application/json' },
      body: MCP_LIST,
    });
    expect(mcp.status).toBe(200);
    expect((await raw(server.httpPort, '/healthz', { headers: { host: 'other.internal' } })).status).toBe(403);
  });

  it('answers an unparsable Host 400 invalid_request, on /mcp too, never 500', async () => {
    const logger = silentLogger();
    const server = await start({ logger });
    for (const host of ['x:99999', 'a b', 'evil.example/x', '[::1']) {
      for (const path of ['/mcp', listPath(freshAddress())]) {
        const answer = await raw(server.httpPort, path, {
          method: path === '/mcp' ? 'POST' : 'GET',
          headers: { host, 'content-type': 'application/json', accept: 'application/json' },
          body: path === '/mcp' ? MCP_LIST : undefined,
        });
        expect([answer.status, answer.json?.error], `${host} ${path}`).toEqual([400, 'invalid_request']);
      }
    }
    expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('is refused by the MCP SDK’s own protection too, given the same lists (defence in depth behind the edge)', async () => {
    const policy = edgePolicyOf({ host: '127.0.0.1', allowedHosts: [], allowOrigins: [] });
    const tools = { maxWaitSeconds: 25 } as unknown as MailTools;
    let port = 0;
    const endpoint = createMcpEndpoint({
      tools,
      domains: ['mailroom.test'],
      logger: silentLogger(),
      rebinding: (host) => sdkRebindingOptions(policy, port, host),
    });
    const http = createServer((req, res) => endpoint.handle(req, res));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    port = (http.address() as AddressInfo).port;
    try {
      const headers = { 'content-type': 'application/json', accept: 'application/json' };
      expect((await raw(port, '/mcp', { method: 'POST', headers: { ...headers, host: 'evil.example' }, body: MCP_LIST })).status).toBe(403);
      expect((await raw(port, '/mcp', { method: 'POST', headers: { ...headers, origin: EVIL }, body: MCP_LIST })).status).toBe(403);
      expect((await raw(port, '/mcp', { method: 'POST', headers: { ...headers, host: `localhost:${port}` }, body: MCP_LIST })).status).toBe(200);
    } finally {
      endpoint.close();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe('the UI page', () => {
  it('is sent with Cross-Origin-Opener-Policy: same-origin, so a page it opens gets no handle on it', async () => {
    const server = await start();
    expect((await call(server, '/')).headers['cross-origin-opener-policy']).toBe('same-origin');
  });
});

describe('the request counters', () => {
  it('count nothing before the token is checked, and no malformed address (their keys stay short)', async () => {
    const server = await start({ token: 'sesame' });
    const address = freshAddress();
    expect((await call(server, listPath(address))).status).toBe(401);
    expect(server.stats(address).list).toBe(0);
    const long = `${'x'.repeat(16_000)}@mailroom.test`;
    expect((await call(server, listPath(long), { headers: { authorization: 'Bearer sesame' } })).status).toBe(400);
    expect(server.stats(long).list).toBe(0);
    expect((await call(server, listPath(address), { headers: { authorization: 'Bearer sesame' } })).status).toBe(200);
    expect(server.stats(address).list).toBe(1);
  });
});
