// What every route group answers with: a Reply, computed whole before it is
// written (../write-reply.ts), so that one place decides how it reaches the
// wire (and an injected fault, how it fails to). Refusals become replies here,
// with the contract's `{error, message}` body and the refusal's own headers.
import type { Refusal } from '../../../contract/refusal.js';

export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...headers }, body: JSON.stringify(body) };
}

export function refusalReply(refusal: Refusal): Reply {
  return json(refusal.status, { error: refusal.slug, message: refusal.message }, { ...refusal.headers });
}
