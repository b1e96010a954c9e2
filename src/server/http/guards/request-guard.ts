// The edge checks every HTTP request passes before it is counted or its
// token looked at: the Host it names (DNS rebinding) and the page that sent
// it (Origin, Sec-Fetch-Site), before routing; once routed, for a request
// that changes state, that its body is JSON. The first refusal is the
// answer. docs/security.md has the why.
import type { IncomingMessage } from 'node:http';
import type { Refusal } from '../../../contract/refusal.js';
import { isUiPath } from '../ui-assets.js';
import { refuseContentType } from './content-type.js';
import type { EdgePolicy } from './edge-policy.js';
import { refuseHost } from './host.js';
import { refuseOrigin } from './origin.js';

/** Before routing: the Host and the sending page. */
export function guardRequest(req: Pick<IncomingMessage, 'method' | 'headers'>, path: string, policy: EdgePolicy): Refusal | undefined {
  const method = req.method ?? 'GET';
  return refuseHost(req.headers.host, policy) ?? refuseOrigin(method, req.headers, policy, isUiPath(path));
}

/**
 * Once routed (a method the route does not take is a 405, which changes
 * nothing), before the token check: a request that changes state sends JSON.
 */
export function guardStateChange(req: Pick<IncomingMessage, 'method' | 'headers'>): Refusal | undefined {
  return refuseContentType(req.method ?? 'GET', req.headers);
}
