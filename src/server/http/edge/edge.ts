// The HTTP edge: the one place every request passes through on its way to a
// route group, and every response on its way out. A route group never checks
// who is asking or sets a security header itself; it is reached only
// through here (../api.ts `handle`).
//
// On the way in, `edgeChecks` is the list of checks, in the order they run.
// Each is a small function of the request (method, path, headers and the
// matched route's kind) that returns the refusal answering it, or undefined
// to pass it to the next; the first refusal answers, and no route group runs.
// The route table matches first, so an unknown path or method is refused
// (404, 405) before any check, as the contract says.
//
// The checks, in order: the Host it names (DNS rebinding, host.ts), the page
// that sent it (Origin, Sec-Fetch-Site, origin.ts), that a request changing
// state says its body is JSON (content-type.ts), then the token
// (bearer-token.ts). So a page other than the server's own is refused
// before anything is counted or its token looked at; docs/security.md has
// the why.
//
// To add a check: write it as an
// `EdgeCheck` (edge-check.ts) in its own file in this folder, with the test
// that refuses a request by it, and put it in the list below where it must
// run; any option it needs goes into `EdgeOptions`, filled by ../api.ts from
// the server's options.
//
// On the way out, `dressResponse` puts the security headers on every
// response, whatever route or refusal made it (security-headers.ts).
// Request bodies are read only through body.ts, under the caps listed there.
import type { ServerResponse } from 'node:http';
import type { Refusal } from '../../../contract/refusal.js';
import { requireBearerToken } from './bearer-token.js';
import { refuseContentType } from './content-type.js';
import type { EdgeCheck, EdgeRequest } from './edge-check.js';
import type { EdgePolicy } from './edge-policy.js';
import { refuseHost } from './host.js';
import { refuseOrigin } from './origin.js';
import { setSecurityHeaders } from './security-headers.js';

export interface EdgeOptions {
  /** The API token the server was started with; undefined when it takes requests without one. */
  readonly token: string | undefined;
  /** The names and origins a browser may reach the server by (edge-policy.ts). */
  readonly policy: EdgePolicy;
}

/** The checks every request passes, in the order they run. */
export function edgeChecks(options: EdgeOptions): readonly EdgeCheck[] {
  const { policy } = options;
  return Object.freeze([
    ({ headers }) => refuseHost(headers.host, policy),
    ({ method, headers, routeKind }) => refuseOrigin(method, headers, policy, routeKind === 'ui'),
    // A provider's send call takes its provider's body (a form, multipart); the provider's own auth header, which no page can send without a preflight, guards it instead.
    ({ method, headers, routeKind }) => (routeKind === 'provider' ? undefined : refuseContentType(method, headers)),
    ...(options.token === undefined ? [] : [requireBearerToken(options.token)]),
  ]);
}

/** The first refusal any check answers `request` with, or undefined when every check lets it through. */
export function firstRefusal(checks: readonly EdgeCheck[], request: EdgeRequest): Refusal | undefined {
  for (const check of checks) {
    const refusal = check(request);
    if (refusal) return refusal;
  }
  return undefined;
}

/** Sets what every response carries, before anything can write one. */
export function dressResponse(res: ServerResponse): void {
  setSecurityHeaders(res);
}
