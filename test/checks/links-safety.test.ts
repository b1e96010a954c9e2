// Where the link checker goes and what it carries there (security review 2,
// findings 3 and 4): never to link-local or a metadata service, to loopback
// and private hosts only as `allowPrivate` says, at every hop; at most
// `maxLinks` links within `totalTimeout`; the test's credentials only where
// a browser would send them. A real loopback listener logs every request;
// names are resolved by a stand-in for DNS through the checked lookup.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readHtml } from '../../src/checks/html-reading.js';
import { checkLinks } from '../../src/checks/links-check.js';
import { DEFAULT_MAX_LINKS, type LinkCheckOptions } from '../../src/checks/options.js';
import { checkMail } from '../../src/checks/run-checks.js';

let server: Server;
let port: number;
let base: string;
const seen: { host: string; path: string; auth: string | undefined; cookie: string | undefined }[] = [];
const hanging = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push({ host: req.headers.host ?? '', path: url.pathname, auth: req.headers.authorization, cookie: req.headers.cookie });
    if (url.pathname === '/redir') return void res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
    if (url.pathname === '/hang') return void hanging.add(res);
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

beforeEach(() => {
  seen.length = 0;
});

afterAll(async () => {
  for (const res of hanging) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Stands in for DNS: every name here is the listener, but `meta.attacker.test`, which is the metadata service. */
const NAMES: Record<string, { address: string; family: number }> = {
  'app.test': { address: '127.0.0.1', family: 4 },
  'sub.app.test': { address: '127.0.0.1', family: 4 },
  'other.test': { address: '127.0.0.1', family: 4 },
  'meta.attacker.test': { address: '169.254.169.254', family: 4 },
  'nat64.attacker.test': { address: '64:ff9b::a9fe:a9fe', family: 6 },
};
const resolve: LookupFunction = (hostname, _options, callback) => {
  const found = NAMES[hostname];
  if (!found) return callback(Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
  callback(null, [found]);
};

const html = (urls: readonly string[]) => urls.map((url, i) => `<p><a href="${url}">Link ${i}</a></p>`).join('\n');

/** The links check of a mail linking to `urls`, names resolved by NAMES: its problems' messages. */
async function linkProblems(urls: readonly string[], options: LinkCheckOptions = {}): Promise<string[]> {
  const body = html(urls);
  const problems = await checkLinks({ html: body, text: '', size: body.length, subject: 'Links' }, readHtml(body), options, undefined, resolve);
  return problems.map((p) => p.message);
}

const REFUSED = "not checked: refused by the link checker's destination policy.";

describe('the link checker’s destinations', () => {
  // Finding 3: the review's links went to every address, redirects included.
  it('in a test process reach loopback (the app) but never link-local or a metadata service, as written, at a redirect or by a name', async () => {
    const problems = await linkProblems(
      [
        `${base}/ok`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[::ffff:169.254.169.254]/',
        'http://metadata.google.internal/',
        `${base}/redir?to=${encodeURIComponent('http://169.254.170.2/v2/credentials')}`,
        `http://meta.attacker.test:${port}/`,
        `http://nat64.attacker.test:${port}/`,
      ],
      // The refusals come before any connection; the timeout is for the app's
      // two answers, which took over 500 ms once under npm test's load.
      { timeout: 10_000 },
    );
    expect(problems).toEqual([
      `The link "Link 1" → http://169.254.169.254/latest/meta-data/ was ${REFUSED}`,
      `The link "Link 2" → http://[::ffff:a9fe:a9fe]/ was ${REFUSED}`,
      `The link "Link 3" → http://metadata.google.internal/ was ${REFUSED}`,
      `The link "Link 4" → ${base}/redir?to=http%3A%2F%2F169.254.170.2%2Fv2%2Fcredentials was redirected to http://169.254.170.2/v2/credentials, which was ${REFUSED}`,
      `The link "Link 5" → http://meta.attacker.test:${port}/ was ${REFUSED}`,
      `The link "Link 6" → http://nat64.attacker.test:${port}/ was ${REFUSED}`,
    ]);
    expect(seen.map((s) => s.path).sort()).toEqual(['/ok', '/redir']);
  });

  it('with allowPrivate, reach only the private hosts listed, by name or address, and refuse the rest at any hop', async () => {
    const after = `http://127.0.0.2:${port}/after`;
    const urls = [`${base}/redir?to=${encodeURIComponent(after)}`, `http://app.test:${port}/ok`, `http://other.test:${port}/ok`];
    expect(await linkProblems(urls, { allowPrivate: ['127.0.0.1', 'app.test'] })).toEqual([
      `The link "Link 0" → ${urls[0]} was redirected to ${after}, which was ${REFUSED}`,
      // other.test resolves to a listed address: the address decides.
    ]);
    expect(seen.map((s) => `${s.host}${s.path}`).sort()).toEqual([`127.0.0.1:${port}/redir`, `app.test:${port}/ok`, `other.test:${port}/ok`]);
    seen.length = 0;
    expect(await linkProblems([`http://app.test:${port}/ok`], { allowPrivate: ['10.0.0.0/8'] })).toEqual([
      `The link "Link 0" → http://app.test:${port}/ok was ${REFUSED}`,
    ]);
    expect(seen).toEqual([]);
  });

  it('are refused options that are not hosts, or that would open link-local', async () => {
    const mail = { html: '', text: '', size: 0, subject: '' };
    await expect(checkMail(mail, { links: { allowPrivate: ['169.254.0.0/16'] } })).rejects.toThrow(
      'Expected `links.allowPrivate[]` to be a host name, an address or a CIDR, got "169.254.0.0/16": link-local or a cloud metadata address, which is never a destination',
    );
    await expect(checkMail(mail, { links: { allowPrivate: 'some' as never } })).rejects.toThrow(/links.allowPrivate/);
  });
});

describe('the links checked', () => {
  it('are at most maxLinks (100 by default), the rest one warning', async () => {
    expect(DEFAULT_MAX_LINKS).toBe(100);
    const urls = Array.from({ length: 5 }, (_, i) => `${base}/ok?i=${i}`);
    const body = html(urls);
    const report = await checkMail({ html: body, text: '', size: body.length, subject: 'Many' }, { only: ['links'], links: { maxLinks: 3 } });
    expect(report).toMatchObject({
      ok: true,
      problems: [{ severity: 'warning', message: '2 links not checked: the mail has 5 distinct links and the check fetches at most 3 (links.maxLinks).' }],
    });
    expect(seen).toHaveLength(3);
  });

  it('are those fetched within totalTimeout, the rest one warning', async () => {
    const urls = [`${base}/hang?a`, `${base}/hang?b`, `${base}/hang?c`];
    expect(await linkProblems(urls, { totalTimeout: 200, concurrency: 2 })).toEqual([
      "3 links not checked: the check's total time, 200 ms, ran out (links.totalTimeout).",
    ]);
    expect(seen).toHaveLength(2);
  });
});

describe('the credentials a link check is given', () => {
  // Finding 4, its reproduction: the app's Authorization went on to the host a redirect named (localhost is another origin than 127.0.0.1).
  it('go to the link’s own origin only: headers and name → value cookies are dropped at a redirect to another origin', async () => {
    const link = `${base}/redir?to=${encodeURIComponent(`http://localhost:${port}/attacker-host-after-redirect`)}`;
    const report = await checkMail(
      { html: html([link]), text: '', size: 100, subject: 'Links' },
      { only: ['links'], links: { headers: { authorization: 'Bearer APP-SESSION-SECRET' }, cookies: { sid: 'COOKIE-FOR-127' } } },
    );
    expect(report.problems).toEqual([]);
    expect(seen).toEqual([
      { host: `127.0.0.1:${port}`, path: '/redir', auth: 'Bearer APP-SESSION-SECRET', cookie: 'sid=COOKIE-FOR-127' },
      { host: `localhost:${port}`, path: '/attacker-host-after-redirect', auth: undefined, cookie: undefined },
    ]);
  });

  it('send context.cookies() as a browser would: within their path, host-only or domain, secure ones over https or to loopback only', async () => {
    // The path first, on addresses alone: the cookie for /members is not the home page's.
    const members = { name: 'members', value: '1', domain: '127.0.0.1', path: '/members' };
    expect(await linkProblems([`${base}/home`, `${base}/members/7`], { cookies: [members] })).toEqual([]);
    expect(seen.map((s) => [s.path, s.cookie])).toEqual([
      ['/home', undefined],
      ['/members/7', 'members=1'],
    ]);
    seen.length = 0;

    const cookies = [
      { name: 'host', value: '1', domain: 'app.test', path: '/' },
      { name: 'domain', value: '1', domain: '.app.test', path: '/' },
      { name: 'members', value: '1', domain: '.app.test', path: '/members' },
      { name: 'secure', value: '1', domain: '.app.test', path: '/', secure: true },
      { name: 'local', value: '1', domain: '127.0.0.1', path: '/', secure: true },
    ];
    const urls = [`http://app.test:${port}/members/7`, `http://sub.app.test:${port}/membership`, `http://app.test:${port}/members`, `${base}/home`];
    expect(await linkProblems(urls, { cookies })).toEqual([]);
    const cookieOf = (host: string, path: string) => seen.find((s) => s.host === `${host}:${port}` && s.path === path)?.cookie;
    expect(cookieOf('app.test', '/members/7')).toBe('host=1; domain=1; members=1');
    expect(cookieOf('sub.app.test', '/membership')).toBe('domain=1');
    expect(cookieOf('app.test', '/members')).toBe('host=1; domain=1; members=1');
    expect(cookieOf('127.0.0.1', '/home')).toBe('local=1');
  });
});
