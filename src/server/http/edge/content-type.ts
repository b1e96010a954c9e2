// A request that changes state must say its body is JSON. A web page can
// send a POST of `text/plain`, a form or `multipart/form-data` to any
// address without asking first (a CORS "simple" request, `mode: 'no-cors'`
// or a <form>); `application/json` it can send only after a preflight,
// which this server never approves (no CORS headers). So no page of another
// origin can make a POST that is taken (`415 unsupported_media_type`).
//
// A DELETE (or PUT, PATCH) from another origin always needs that preflight
// too; a DELETE without a body needs no type, so `curl -X DELETE` and the
// clients that send none keep working. One with a body must say JSON.
import { Refusal } from '../../../contract/refusal.js';

const ALWAYS = new Set(['POST', 'PUT', 'PATCH']);

export interface BodyHeaders {
  readonly 'content-type'?: string | undefined;
  readonly 'content-length'?: string | undefined;
  readonly 'transfer-encoding'?: string | undefined;
}

function hasBody(headers: BodyHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

/** Whether `value` is `application/json`, with parameters or none (`; charset=utf-8`). */
export function isJsonType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const essence = value.split(';', 1)[0]!.trim().toLowerCase();
  return essence === 'application/json';
}

export function refuseContentType(method: string, headers: BodyHeaders): Refusal | undefined {
  const changes = ALWAYS.has(method) || (method === 'DELETE' && hasBody(headers));
  if (!changes || isJsonType(headers['content-type'])) return undefined;
  const given = headers['content-type'];
  return new Refusal(
    415,
    'unsupported_media_type',
    `${method} must send Content-Type: application/json${given === undefined ? ' (none was sent)' : `, not ${JSON.stringify(given)}`}: a request that changes state is taken only as JSON, which a page of another origin cannot send`,
  );
}
