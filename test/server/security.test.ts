// The security defaults (issue 11, item 5): loopback by default, a loud line
// when bound elsewhere without a token, the token on every route but
// /healthz, no CORS, nothing a browser would render as a page, and nothing
// from mail in a response header.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { chromium } from '@playwright/test';
import { describe, expect, it } from 'vitest';
import { chromiumLaunchOptions } from '../../e2e/chromium.js';
import { bearerTokenCheck } from '../../src/server/http/edge/bearer-token.js';
import { isLoopbackHost } from '../../src/server/base/loopback.js';
import { exposureWarning } from '../../src/server/exposure-warning.js';
import { startServer, type MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, listPath, messagePath, sendRaw, silentLogger, start, type ApiAnswer } from './helpers.js';
import { postMcp } from './wait-helpers.js';

/** Header names an answer may carry; anything else would be news. */
const ALLOWED_HEADERS = new Set([
  'content-type',
  'content-length',
  'cache-control',
  'x-content-type-options',
  'content-security-policy',
  'retry-after',
  'allow',
  'www-authenticate',
  'connection',
  'keep-alive',
  'date',
  'transfer-encoding',
  'vary',
]);

function expectSafeHeaders(answer: Pick<ApiAnswer, 'headers' | 'status'>, what: string): void {
  const names = Object.keys(answer.headers);
  expect(
    names.filter((name) => name.startsWith('access-control-')),
    `${what}: CORS headers`,
  ).toEqual([]);
  expect(
    names.filter((name) => !ALLOWED_HEADERS.has(name)),
    `${what}: unexpected headers`,
  ).toEqual([]);
  expect(answer.headers['x-content-type-options'], what).toBe('nosniff');
  expect(answer.headers['content-security-policy'], what).toBe("default-src 'none'; frame-ancestors 'none'; sandbox");
  const type = String(answer.headers['content-type'] ?? '');
  if (answer.status !== 204) expect(type, `${what}: content type`).toMatch(/^(application\/json|message\/rfc822)(;|$)/);
}

/** An HTTP request written byte for byte; the answer's head parsed. */
async function rawHttp(server: MailroomServer, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const socket = connect(server.httpPort, '127.0.0.1');
  socket.write(request);
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]), headers, body: text.slice(end + 4) };
}

describe('binding', () => {
  it('binds both listeners to loopback by default: another interface of this machine is refused', async () => {
    const server = await startServer({ smtpPort: 0, httpPort: 0, logger: silentLogger() });
    try {
      expect(server.apiURL).toBe(`http://127.0.0.1:${server.httpPort}`);
      const external = Object.values(networkInterfaces())
        .flat()
        .find((nic) => nic && nic.family === 'IPv4' && !nic.internal)?.address;
      expect(external, 'this test needs a non-loopback IPv4 interface to knock on').toBeDefined();
      for (const port of [server.smtpPort, server.httpPort]) {
        const outcome = await new Promise<string>((resolve) => {
          const socket = connect(port, external);
          socket.once('connect', () => (socket.destroy(), resolve('connected')));
          socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        });
        expect(outcome, `${external}:${port}`).toBe('ECONNREFUSED');
      }
    } finally {
      await server.close();
    }
  });

  it('tells loopback hosts from the rest', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', 'localhost', 'LOCALHOST', 'app.localhost', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', 'localhost.example.com', '128.0.0.1', '::2']) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });

  it('warns once, in words, when bound beyond loopback without a token; not with a token, not on loopback', async () => {
    expect(exposureWarning('127.0.0.1', undefined)).toBeUndefined();
    expect(exposureWarning('0.0.0.0', 'tok')).toBeUndefined();
    const open = silentLogger();
    const exposed = await start({ host: '0.0.0.0', logger: open });
    expect(exposed.apiURL).toBe(`http://127.0.0.1:${exposed.httpPort}`);
    expect(open.lines).toEqual([
      {
        level: 'warn',
        message:
          "mailroom: WARNING: listening on 0.0.0.0, which other machines may reach, without a token: anyone who can connect can read and delete every mailbox. Give it a token (MAILROOM_TOKEN, --token-file FILE; startServer's token) or bind to 127.0.0.1.",
      },
    ]);
    const guarded = silentLogger();
    await start({ host: '0.0.0.0', token: 'tok', logger: guarded });
    const loopback = silentLogger();
    await start({ logger: loopback });
    expect([...guarded.lines, ...loopback.lines]).toEqual([]);
  });
});

describe('the token', () => {
  it('is checked whatever its length or case of the scheme, and nothing else passes', () => {
    const check = bearerTokenCheck('s3cret-token');
    expect(check('Bearer s3cret-token')).toBe(true);
    expect(check('bearer s3cret-token')).toBe(true);
    expect(check('BEARER \ts3cret-token ')).toBe(true);
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      's3cret-token',
      'Basic s3cret-token',
      'Bearer s3cret-toke',
      'Bearer s3cret-tokenn',
      'Bearer S3CRET-TOKEN',
      'Bearer s3cret-token extra',
      'Bearer s3cret-token\r\nX: y',
      'Bearers3cret-token',
    ]) {
      expect(check(header), JSON.stringify(header)).toBe(false);
    }
  });

  it('is required on every route, the MCP endpoint and the test hooks included, and /healthz stays open', async () => {
    const server = await start({ token: 's3cret-token', waitSlots: 4, faultInjection: true });
    const address = freshAddress();
    const routes: Array<[method: 'GET' | 'DELETE' | 'POST', path: string, body?: string]> = [
      ['GET', listPath(address)],
      ['DELETE', listPath(address)],
      ['GET', `/api/v1/mailbox/wait?address=${address}&timeout=0`],
      ['GET', messagePath('00000000000', address)],
      ['GET', messagePath('00000000000', address, '/raw')],
      ['DELETE', messagePath('00000000000', address)],
      ['POST', '/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })],
      ['POST', '/_mailroom/faults', JSON.stringify({ address, fault: { kind: 'reset' } })],
      ['DELETE', '/_mailroom/faults'],
      ['GET', `/_mailroom/stats?address=${address}`],
      // The web UI's calls (the event stream is held open: test/server/web-ui.test.ts proves it with the token).
      ['GET', '/api/v1/mailboxes'],
    ];
    for (const [method, path, body] of routes) {
      for (const authorization of [undefined, 'Bearer wrong', 'Bearer s3cret-tokenX', 's3cret-token']) {
        const headers: Record<string, string> = { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) };
        const answer = await call(server, path, { method, headers, body });
        expect(answer.status, `${method} ${path} with ${authorization}`).toBe(401);
        expect(answer.json).toMatchObject({ error: 'unauthorized' });
        expect(answer.headers['www-authenticate']).toBe('Bearer');
        expectSafeHeaders(answer, `${method} ${path}`);
      }
      const allowed = await call(server, path, { method, headers: { 'content-type': 'application/json', authorization: 'Bearer s3cret-token' }, body });
      expect(allowed.status, `${method} ${path} with the token: ${allowed.text}`).not.toBe(401);
    }
    // nothing the refused calls asked for was done: no fault was armed
    expect(server.stats(address).faulted).toBe(0);
    expect((await call(server, '/healthz')).status).toBe(200);
    // The event stream is refused like the rest (with the token it streams: web-ui.test.ts).
    expect((await call(server, '/api/v1/events')).status).toBe(401);
  });
});

describe('what a browser gets', () => {
  it('sends no CORS headers, to a preflight or anything else, and nosniff plus a sandboxing CSP on every answer', async () => {
    const server = await start({ waitSlots: 4, faultInjection: true, listPerSecond: Infinity });
    const address = freshAddress();
    await sendRaw(server.smtpPort, 'a@example.com', [address], 'Subject: hi\r\n\r\nbody\r\n');
    const id = (await call(server, listPath(address))).json.messages[0].id as string;
    // The page's own origin: a foreign one is refused before anything is served (cross-site.test.ts), probed below.
    const origin = { origin: server.apiURL };
    const answers: Array<[string, ApiAnswer]> = [];
    const probe = async (what: string, path: string, init: Parameters<typeof call>[2] = {}) =>
      answers.push([what, await call(server, path, { ...init, headers: { ...origin, ...init.headers } })]);
    await probe('preflight', listPath(address), { method: 'OPTIONS', headers: { 'access-control-request-method': 'DELETE' } });
    await probe('preflight on /mcp', '/mcp', { method: 'OPTIONS', headers: { 'access-control-request-method': 'POST' } });
    await probe('list', listPath(address));
    await probe('message', messagePath(id, address));
    await probe('raw', messagePath(id, address, '/raw'));
    await probe('HEAD raw', messagePath(id, address, '/raw'), { method: 'HEAD' });
    await probe('wait', `/api/v1/mailbox/wait?address=${address}&timeout=0`);
    await probe('healthz', '/healthz');
    await probe('not found', '/index.html');
    await probe('bad id', '/api/v1/message/%3Cscript%3E');
    await probe('stats', `/_mailroom/stats?address=${address}`);
    await probe('mailbox index', '/api/v1/mailboxes');
    await probe('mcp', '/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    await probe('mcp refusal', '/mcp', { method: 'POST', headers: { 'content-type': 'text/html' }, body: '<html>' });
    await probe('delete', messagePath(id, address), { method: 'DELETE' });
    await probe('foreign origin', listPath(address), { headers: { origin: 'https://evil.example' } });
    for (const [what, answer] of answers) expectSafeHeaders(answer, what);
    expect(answers.find(([what]) => what === 'raw')![1].headers['content-type']).toBe('message/rfc822');
    // an answer node:http writes itself, for a request it cannot parse
    const unparsed = await rawHttp(server, 'NOT HTTP AT ALL\r\n\r\n');
    expect(unparsed.status).toBe(400);
    expectSafeHeaders({ status: unparsed.status, headers: unparsed.headers }, 'unparseable request');
  });

  it('never runs the HTML of a mail: real Chromium opening the raw source and the JSON runs no script', async () => {
    const server = await start({ listPerSecond: Infinity, messagePerSecond: Infinity });
    const address = freshAddress();
    const html = '<html><body><h1 id="x">hello</h1><script>document.title = "pwned"; window.pwned = true;</script></body></html>';
    await sendRaw(server.smtpPort, 'a@example.com', [address], `Subject: page\r\nContent-Type: text/html\r\n\r\n${html}\r\n`);
    // a message that is nothing but HTML, no header block, the worst case for sniffing
    await sendRaw(server.smtpPort, 'a@example.com', [address], `${html}\r\n`);
    const ids = ((await call(server, listPath(address))).json.messages as Array<{ id: string }>).map((m) => m.id);
    const browser = await chromium.launch(chromiumLaunchOptions());
    try {
      const page = await browser.newPage();
      for (const id of ids) {
        for (const suffix of ['/raw', '']) {
          const url = `${server.apiURL}${messagePath(id, address, suffix)}`;
          // Chromium may show it as text or offer it as a download; either is fine, running it is not.
          await page.goto(url).catch((error: Error) => expect(error.message, url).toContain('Download is starting'));
          expect(await page.title(), url).not.toBe('pwned');
          expect(await page.evaluate('typeof window.pwned'), url).toBe('undefined');
          expect(await page.evaluate("document.getElementById('x') === null"), url).toBe(true);
        }
      }
    } finally {
      await browser.close();
    }
  });
});

describe('mail never reaches a response header', () => {
  it('keeps CRLF-laden subjects, names and filenames in bodies only', async () => {
    const server = await start({ listPerSecond: Infinity, messagePerSecond: Infinity, waitSlots: 4 });
    const address = freshAddress();
    const source = [
      'From: =?UTF-8?Q?Evil=0D=0ASet-Cookie:_from=3Dmail?= <evil@example.com>',
      'Subject: =?UTF-8?Q?hi=0D=0ASet-Cookie:_subject=3Dmail=0D=0A=0D=0A<script>?=',
      'Content-Type: multipart/mixed; boundary="b"',
      'X-Header: value\rSet-Cookie: bare=cr',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'body',
      '--b',
      'Content-Type: text/html; name="=?UTF-8?Q?x=0D=0AContent-Type:_text/html?="',
      'Content-Disposition: attachment; filename="=?UTF-8?Q?evil=0D=0ALocation:_https://evil.example?=.html"',
      '',
      '<script>alert(1)</script>',
      '--b--',
      '',
    ].join('\r\n');
    expect(await sendRaw(server.smtpPort, 'evil@example.com', [address], source)).toMatch(/^250 /);
    const list = await call(server, listPath(address));
    const id = list.json.messages[0].id as string;
    const message = await call(server, messagePath(id, address));
    // the values did reach the API, intact, in the body
    expect(message.json.subject).toContain('Set-Cookie: subject=mail');
    expect(message.json.attachments[0].filename).toContain('Location: https://evil.example');
    const answers = [
      list,
      message,
      await call(server, messagePath(id, address, '/raw')),
      await call(server, `/api/v1/mailbox/wait?address=${address}&timeout=0`),
      await postMcp(server, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_message', arguments: { address, id } } }), {
        'Content-Type': 'application/json',
      }),
    ];
    for (const answer of answers) {
      expectSafeHeaders(answer, 'an answer about the evil mail');
      const values = Object.values(answer.headers).flat().join('\n');
      for (const leaked of ['from=mail', 'subject=mail', 'bare=cr', 'evil', 'script', 'Location']) expect(values).not.toContain(leaked);
    }
  });
});
