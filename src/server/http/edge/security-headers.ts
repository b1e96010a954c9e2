// Headers on every HTTP answer, refusals and MCP included. The API serves JSON
// and `message/rfc822` only; mail is full of HTML written by whoever sent it,
// so no answer may ever be sniffed or rendered as a page by a browser that
// opens an API URL:
// - `nosniff` keeps a browser to the declared type (no HTML sniffed out of raw
//   source or JSON);
// - the CSP's `sandbox` and `default-src 'none'` mean that even if something
//   were rendered, it would run no script, load nothing and sit in an opaque
//   origin; `frame-ancestors 'none'` keeps it out of frames.
// No CORS header is ever sent: a web page on another origin cannot read the
// mailboxes through a visitor's browser.
import type { ServerResponse } from 'node:http';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
});

export function setSecurityHeaders(res: ServerResponse): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
}

/** The same headers as raw lines, for answers written straight to a socket. */
export const SECURITY_HEADER_LINES = Object.entries(SECURITY_HEADERS)
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');
