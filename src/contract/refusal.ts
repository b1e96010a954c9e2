// A refusal and its stable slug (docs/CONTRACT.md, "Refusals"). The HTTP API
// writes it as `{"error": slug, "message": text}` with its status; the MCP
// tools make it a tool error whose structured content carries the same two.
// Callers branch on the slug, never on the text.

export type RefusalSlug =
  | 'invalid_address'
  | 'unknown_domain'
  | 'invalid_request'
  | 'not_found'
  | 'rate_limited'
  | 'unauthorized'
  | 'method_not_allowed'
  | 'internal_error'
  | 'unavailable'
  | 'too_many_waits'
  | 'checks_timeout'
  | 'unsupported_media_type'
  | 'forbidden_origin'
  | 'forbidden_host'
  /** (MCP `get_attachment`) the attachment is over the size the tool returns. */
  | 'too_large';

/**
 * Refusals that say the address can never be listed: waiting, retrying or
 * polling instead of holding cannot change the answer.
 */
export const ADDRESS_REFUSALS: ReadonlySet<string> = new Set<RefusalSlug>(['invalid_address', 'unknown_domain', 'unauthorized']);

export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly slug: RefusalSlug,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}
