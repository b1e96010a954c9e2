// The shape of one check at the HTTP edge (edge.ts runs them, in order).
import type { IncomingHttpHeaders } from 'node:http';
import type { Refusal } from '../../../contract/refusal.js';

/** What a check may look at: the request line, its headers, and which route the route table matched. */
export interface EdgeRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /**
   * The matched route's kind (`healthz`, `ui`, `api`, `mcp`, `events`,
   * `mailboxes`, `smtpLab`, `webhooks`, `metrics`, `faults`, `stats`: the
   * `Route` union in ../routes.ts), for a check that spares some routes.
   */
  readonly routeKind: string;
}

/** One check: the refusal that answers the request, or undefined to let it through to the next. */
export type EdgeCheck = (request: EdgeRequest) => Refusal | undefined;
