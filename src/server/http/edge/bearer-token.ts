// The API token check. Both sides are hashed before the comparison so it takes
// the same time whatever the caller sent: `timingSafeEqual` alone needs equal
// lengths, and returning early on a length mismatch would tell a caller how
// long the token is.
//
// As an edge check (edge.ts), it spares the routes that hold no mail: the
// web UI's static files, which a browser loads before it can send a token,
// and `/healthz`, which probes ask without one; and the provider APIs' send
// calls, which are intake as the SMTP port is (it takes mail without the
// token too), and carry the provider's own key in `Authorization`.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Refusal } from '../../../contract/refusal.js';
import type { EdgeCheck } from './edge-check.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A check of `Authorization` headers against `token`, in time independent of what was sent. */
export function bearerTokenCheck(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    // A missing or malformed header is still compared, against nothing useful,
    // so the refusal costs the same as a wrong token.
    const given = digest(match ? match[1]! : '');
    return timingSafeEqual(given, expected) && match !== null;
  };
}

/** The edge check: `401 unauthorized` with `WWW-Authenticate: Bearer` unless the request carries `token`. */
export function requireBearerToken(token: string): EdgeCheck {
  const isAuthorized = bearerTokenCheck(token);
  return ({ routeKind, headers }) => {
    if (routeKind === 'healthz' || routeKind === 'ui' || routeKind === 'provider' || routeKind === 'sns') return undefined;
    if (isAuthorized(headers.authorization)) return undefined;
    return new Refusal(401, 'unauthorized', 'This server requires `Authorization: Bearer <token>` (the token it was started with)', {
      'www-authenticate': 'Bearer',
    });
  };
}
