// The credentials a link check sends, and where: a test gives the link
// checker its app's session (`links.headers`, `links.cookies`) so links
// behind a login answer, and a mail link that redirects through another
// host must not carry that session there.
// - `headers` and `name → value` cookies are the link's own: sent to its
//   origin as written in the mail, and dropped for good at the first
//   redirect to another origin (fetch() drops `authorization` so).
// - Cookies from `context.cookies()` go where the browser would send them,
//   at every hop: host-only (`localhost`) or domain (`.example.com`),
//   within their `path`, and `secure` ones only over https or to a loopback
//   host (Chromium sends them to http://localhost too).
import { isIP } from 'node:net';
import type { LinkCheckOptions, LinkCookie } from './options.js';

const USER_AGENT = 'mailroom-link-check';

/**
 * The headers of a request to `url`, one hop of a link; `ownOrigin` is
 * false once the link was redirected to another origin than its own.
 */
export function requestHeaders(url: URL, ownOrigin: boolean, options: LinkCheckOptions): Record<string, string> {
  const given: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(ownOrigin ? (options.headers ?? {}) : {})) {
    if (name.toLowerCase() === 'cookie') cookies.push(value);
    else given[name] = value;
  }
  cookies.push(...cookiesFor(url, ownOrigin, options.cookies));
  return { 'user-agent': USER_AGENT, ...given, ...(cookies.length > 0 ? { cookie: cookies.join('; ') } : {}) };
}

function cookiesFor(url: URL, ownOrigin: boolean, cookies: LinkCheckOptions['cookies']): string[] {
  if (!cookies) return [];
  const list: readonly LinkCookie[] = Array.isArray(cookies)
    ? (cookies as readonly LinkCookie[])
    : Object.entries(cookies).map(([name, value]) => ({ name, value: value as string }));
  return list.filter((cookie) => (cookie.domain === undefined ? ownOrigin : sentTo(cookie, url))).map((c) => `${c.name}=${c.value}`);
}

/** Whether a browser sends `cookie` with a request to `url` (RFC 6265 5.4: domain, path, secure). */
function sentTo(cookie: LinkCookie, url: URL): boolean {
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return domainMatches(host, cookie.domain!) && pathMatches(url.pathname, cookie.path ?? '/') && (!cookie.secure || isSecureTo(url, host));
}

function domainMatches(host: string, domain: string): boolean {
  const lower = domain.toLowerCase();
  if (!lower.startsWith('.')) return host === lower; // host-only
  const bare = lower.slice(1);
  return host === bare || (isIP(host) === 0 && host.endsWith(`.${bare}`));
}

/** RFC 6265 5.1.4: the cookie's path is the request's, or a prefix of it ending at a `/`. */
function pathMatches(path: string, cookiePath: string): boolean {
  if (path === cookiePath) return true;
  return path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/');
}

function isSecureTo(url: URL, host: string): boolean {
  if (url.protocol === 'https:') return true;
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
