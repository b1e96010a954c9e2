// `Origin` and `Sec-Fetch-Site`: a browser request made by a page other than
// the server's own is refused (`403 forbidden_origin`) on every route. A
// page's fetch, even `mode: 'no-cors'`, and its form posts carry the page's
// `Origin` on every method but GET and HEAD; `Sec-Fetch-Site` marks the rest
// (a GET by an <img> or a <script>), and only `same-origin` (the UI's own
// calls) and `none` (the address bar, a bookmark) pass. `same-site` is
// refused like `cross-site`: it is a page on another port of the same host
// (a dev server, a notebook, the app under test showing user content), and
// such a page's <img> would otherwise start the GETs that act (the mail
// checks, long-polls that hold a slot). Clients that are not browsers send
// neither header and are not concerned.
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

/** What `Sec-Fetch-Site` says of a request that passes: the server's own page sent it, or nobody did (the person typed the URL). */
const OWN_PAGE_OR_NONE: ReadonlySet<string> = new Set(['same-origin', 'none']);

/**
 * A navigation to the UI's page (a bookmark, a link from a test report, the
 * app under test on another port) is cross-site or same-site when it comes
 * from another page, and serves nothing but the static page; it is let
 * through. Every call the page then makes is same-origin.
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
  if (site !== undefined && !OWN_PAGE_OR_NONE.has(site)) {
    const navigation = headerOf(headers['sec-fetch-mode']) === 'navigate' && (method === 'GET' || method === 'HEAD') && isStaticPage;
    // An allowed origin's page is same-site or cross-site too, and says so with its Origin (checked above).
    const allowedOrigin = origin !== undefined && policy.origins.has(normalizeOrigin(origin) ?? '');
    if (!navigation && !allowedOrigin) {
      return new Refusal(
        403,
        'forbidden_origin',
        `A request sent by a web page other than this server's own (Sec-Fetch-Site: ${site}) is refused, from another port of the same host too; only the web UI page itself may be opened from a link`,
      );
    }
  }
  return undefined;
}
