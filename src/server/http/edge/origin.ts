// `Origin` and `Sec-Fetch-Site`: a browser request made by a page of another
// site is refused (`403 forbidden_origin`) on every route. A page's fetch,
// even `mode: 'no-cors'`, and its form posts carry the page's `Origin` on
// every method but GET and HEAD; `Sec-Fetch-Site: cross-site` marks the rest
// (a GET by an <img> or a <script>). Clients that are not browsers send
// neither and are not concerned.
//
// The server's own origin is the one the request was sent to: `Origin`'s
// host and port equal to `Host` (which host.ts has checked). Any other must
// be given (`--allow-origin`, startServer's allowOrigins).
import { Refusal } from '../../../contract/refusal.js';
import { normalizeOrigin, type EdgePolicy } from './edge-policy.js';

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

export interface OriginHeaders {
  readonly host?: string | undefined;
  readonly origin?: string | string[] | undefined;
  readonly 'sec-fetch-site'?: string | string[] | undefined;
  readonly 'sec-fetch-mode'?: string | string[] | undefined;
}

function isOwnOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    const url = new URL(origin);
    // `Host` is the authority the browser connected to; the scheme may differ behind a TLS proxy.
    return url.host === new URL(`${url.protocol}//${host}`).host;
  } catch {
    return false;
  }
}

/**
 * A navigation to the UI's page (a bookmark, a link from a test report) is
 * cross-site when it comes from another site, and serves nothing but the
 * static page; it is let through. Every call the page then makes is same-origin.
 */
export function refuseOrigin(method: string, headers: OriginHeaders, policy: EdgePolicy, isStaticPage: boolean): Refusal | undefined {
  const origin = headerOf(headers.origin);
  if (origin !== undefined) {
    const normalized = normalizeOrigin(origin);
    if (!isOwnOrigin(origin, headers.host) && (normalized === undefined || !policy.origins.has(normalized))) {
      return new Refusal(
        403,
        'forbidden_origin',
        `Origin ${JSON.stringify(origin)} is not this server's own: a web page of another origin may not call it. Start the server with --allow-origin ${
          normalized ?? '<origin>'
        } (startServer's allowOrigins) to let that page in`,
      );
    }
  }
  const site = headerOf(headers['sec-fetch-site']);
  if (site === 'cross-site') {
    const navigation = headerOf(headers['sec-fetch-mode']) === 'navigate' && (method === 'GET' || method === 'HEAD') && isStaticPage;
    // An allowed origin's page is cross-site too, and says so with its Origin (checked above).
    const allowedOrigin = origin !== undefined && policy.origins.has(normalizeOrigin(origin) ?? '');
    if (!navigation && !allowedOrigin) {
      return new Refusal(
        403,
        'forbidden_origin',
        'A request sent by a page of another site (Sec-Fetch-Site: cross-site) is refused; only the web UI page itself may be opened from a link',
      );
    }
  }
  return undefined;
}
