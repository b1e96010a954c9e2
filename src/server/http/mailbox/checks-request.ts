// What `/api/v1/message/{id}/checks` is asked to run. A GET runs the checks
// that fetch nothing. The links check sends requests from this server to
// every link of a mail, an action on third parties, so it is a POST with a
// JSON body, `{"links": true}`: the edge's rules for a request that acts
// (JSON only, no other origin) cover it, and no <img> of another page can
// start it the way it could start a GET.
import type { IncomingMessage } from 'node:http';
import { describeValue } from '../../../contract/validation.js';
import { Refusal } from '../../../contract/refusal.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import { singleParam } from '../edge/params.js';

export interface ChecksAsked {
  /** Fetch the links too. */
  readonly links: boolean;
}

const HOW = 'POST /api/v1/message/{id}/checks?mailbox=A with Content-Type: application/json and the body {"links": true}';

export async function checksAsked(req: IncomingMessage, params: URLSearchParams): Promise<ChecksAsked> {
  const links = singleParam(params, 'links');
  if (req.method !== 'POST') {
    if (links === '1') throw new Refusal(400, 'invalid_request', `The links check is asked with a POST: ${HOW}. A GET runs the checks that fetch nothing`);
    if (links !== undefined && links !== '0')
      throw new Refusal(400, 'invalid_request', `Expected parameter \`links\` to be absent (or 0), got ${JSON.stringify(links)}; to check the links, ${HOW}`);
    return { links: false };
  }
  if (links !== undefined) throw new Refusal(400, 'invalid_request', `A POST asks for the links check in its body, not with \`links\` in the query: ${HOW}`);
  const raw = await readBodyUpTo(req, BODY_LIMITS.checks);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `The checks' body is at most ${BODY_LIMITS.checks} bytes, like {"links": true}`);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalid_request', `The body must be JSON, like {"links": true}`);
  }
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
  const unknown = fields && Object.keys(fields).find((key) => key !== 'links');
  if (!fields || unknown !== undefined || !['boolean', 'undefined'].includes(typeof fields.links)) {
    throw new Refusal(
      400,
      'invalid_request',
      `Expected the body to be {"links": true} or {"links": false}, got ${unknown !== undefined ? `the key ${JSON.stringify(unknown)}` : describeValue(body)}`,
    );
  }
  return { links: fields.links === true };
}
