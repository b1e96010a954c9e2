// The links check against a real HTTP server on loopback: a page that
// answers, one that is missing, redirects (to a page and to a missing one),
// a server that refuses HEAD, one that never answers (cut by a small
// injected timeout) and a port nobody listens on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkMail } from '../../src/checks/run-checks.js';
import { freePort } from '../support/free-port.js';

let server: Server;
let base: string;
const seen: { method: string; path: string; cookie: string | undefined; auth: string | undefined }[] = [];
const hanging = new Set<ServerResponse>();

const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
  '/ok': (_req, res) => res.writeHead(200).end('fine'),
  '/missing': (_req, res) => res.writeHead(404).end('not here'),
  '/moved': (_req, res) => res.writeHead(301, { location: '/ok' }).end(),
  '/moved-to-missing': (_req, res) => res.writeHead(302, { location: '/missing' }).end(),
  '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
  '/no-head': (req, res) => res.writeHead(req.method === 'HEAD' ? 405 : 200).end(),
  '/broken': (_req, res) => res.writeHead(500).end(),
  '/members': (req, res) => res.writeHead(req.headers.cookie?.includes('session=abc') && req.headers.authorization === 'Bearer t' ? 200 : 403).end(),
  // Never answers: the link check's own timeout ends the request.
  '/hang': (_req, res) => void hanging.add(res),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ method: req.method ?? '', path, cookie: req.headers.cookie, auth: req.headers.authorization });
    (routes[path] ?? ((_q, r: ServerResponse) => r.writeHead(404).end()))(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

function mailLinking(links: Record<string, string>, text = 'See the site.') {
  const anchors = Object.entries(links).map(([label, path]) => `<p><a href="${path.startsWith('http') ? path : base + path}">${label}</a></p>`);
  return { html: `<html><body>${anchors.join('\n')}</body></html>`, text, size: 500, subject: 'Links' };
}

async function linkProblems(links: Record<string, string>, options: Parameters<typeof checkMail>[1] = {}) {
  const report = await checkMail(mailLinking(links), { only: ['links'], ...options });
  return report.problems.map((p) => p.message);
}

describe('the links check', () => {
  it('passes a mail whose links answer, directly or through a redirect, and one whose server refuses HEAD but answers GET', async () => {
    const report = await checkMail(mailLinking({ Home: '/ok', Moved: '/moved', 'No head': '/no-head' }), { only: ['links'] });
    expect(report).toMatchObject({ ok: true, problems: [], checked: ['links'] });
    expect(seen.filter((s) => s.path === '/no-head').map((s) => s.method)).toEqual(['HEAD', 'GET']);
    expect(seen.filter((s) => s.path === '/ok').map((s) => s.method)).toContain('HEAD');
  });

  it('names the link, its text and the status of a 404, of a redirect to one, and of a 500', async () => {
    const problems = await linkProblems({ 'Confirm my email': '/missing', 'Your account': '/moved-to-missing', Broken: '/broken' });
    expect(problems).toEqual([
      `The link "Confirm my email" → ${base}/missing answered 404 Not Found.`,
      `The link "Your account" → ${base}/moved-to-missing was redirected to ${base}/missing, which answered 404 Not Found.`,
      `The link "Broken" → ${base}/broken answered 500 Internal Server Error.`,
    ]);
  });

  // Two runs: the refused link on the default timeout, because a loaded
  // machine's late event loop once let a 150 ms timer fire before the
  // refusal was read (CI, stop 31).
  it('says a link got no answer: connection refused, and a timeout', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/gone`;
    const refused = await checkMail(mailLinking({ Gone: closed }), { only: ['links'] });
    expect(refused.ok).toBe(false);
    expect(refused.problems.map((p) => p.message)).toEqual([`The link "Gone" → ${closed} got no answer: connection refused (ECONNREFUSED).`]);
    expect(refused.problems[0]).toMatchObject({ check: 'links', severity: 'error', url: closed, text: 'Gone' });
    expect(await linkProblems({ Slow: '/hang' }, { links: { timeout: 150 } })).toEqual([`The link "Slow" → ${base}/hang got no answer within 150 ms.`]);
  });

  it('gives up on a redirect loop after maxRedirects', async () => {
    expect(await linkProblems({ Loop: '/loop' }, { links: { maxRedirects: 2 } })).toEqual([
      `The link "Loop" → ${base}/loop redirects more than the limit (last to ${base}/loop).`,
    ]);
  });

  it('checks the URLs of the text part too, once each, and skips links by pattern', async () => {
    const mail = { ...mailLinking({ Home: '/ok', Unsubscribe: '/missing' }), text: `Home: ${base}/ok\nHelp: ${base}/broken` };
    const report = await checkMail(mail, { only: ['links'], links: { skip: ['/MISSING'] } });
    expect(report.problems.map((p) => p.message)).toEqual([`The link in the text part → ${base}/broken answered 500 Internal Server Error.`]);
    const skipped = await checkMail(mail, { only: ['links'], links: { skip: [/missing|broken/] } });
    expect(skipped.ok).toBe(true);
  });

  it('sends the headers and cookies it is given, a cookie with a domain only to that domain', async () => {
    expect(await linkProblems({ Members: '/members' })).toEqual([`The link "Members" → ${base}/members answered 403 Forbidden.`]);
    const headers = { authorization: 'Bearer t' };
    expect(await linkProblems({ Members: '/members' }, { links: { headers, cookies: { session: 'abc' } } })).toEqual([]);
    expect(await linkProblems({ Members: '/members' }, { links: { headers, cookies: [{ name: 'session', value: 'abc', domain: '127.0.0.1' }] } })).toEqual([]);
    expect(
      await linkProblems({ Members: '/members' }, { links: { headers, cookies: [{ name: 'session', value: 'abc', domain: 'elsewhere.example' }] } }),
    ).toHaveLength(1);
  });

  it('calls an href that is not an absolute URL an error, without a request', async () => {
    const mail = {
      html: '<p><a href="/account">Your account</a> <a href="mailto:help@acme.example">Help</a> <a href="#top">Top</a></p>',
      text: 'x',
      size: 100,
      subject: 'x',
    };
    const report = await checkMail(mail, { only: ['links'] });
    expect(report.problems.map((p) => p.message)).toEqual([
      'The link "Your account" points to "/account", which is not an absolute URL and goes nowhere in a mail client (line 1: <a href="/account">).',
    ]);
  });
});
