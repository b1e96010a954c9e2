// What both SES APIs share, v1's query protocol (ses-v1.ts) and v2's REST
// JSON (ses-v2.ts): the SigV4 `Authorization` header whose shape (not its
// signature) is checked, the shape of a message id, the 50-recipient limit,
// and where a raw message's recipients come from when the call names none.
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import PostalMime from 'postal-mime';
import { headerValue } from './provider-operation.js';

/** SES's limit: 50 recipients a message, To, Cc and Bcc together. */
export const SES_MAX_RECIPIENTS = 50;

/** Why the call carries no SigV4 `Authorization` header, or not one of its shape; undefined when it does. */
export function sigV4Problem(headers: IncomingHttpHeaders): string | undefined {
  const value = headerValue(headers, 'authorization');
  if (value === undefined) return 'Missing Authentication Token';
  return /^AWS4-HMAC-SHA256 Credential=[^/\s]+\/\d{8}\/[^/\s]+\/[^/\s]+\/aws4_request, ?SignedHeaders=[^,\s]+, ?Signature=[0-9a-f]+$/.test(value)
    ? undefined
    : "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters (an AWS Signature Version 4 header)";
}

/** An SES message id: `010001…-<uuid>-000000`, as SES's own look. */
export function sesMessageId(): string {
  return `0100${randomBytes(6).toString('hex')}-${randomUUID()}-000000`;
}

/** The recipients of a raw message that names none in the call: its own To, Cc and Bcc. */
export async function headerRecipients(source: Buffer): Promise<string[]> {
  const parsed = await PostalMime.parse(source, { attachmentEncoding: 'arraybuffer' });
  return [...(parsed.to ?? []), ...(parsed.cc ?? []), ...(parsed.bcc ?? [])].flatMap((a) => (a.address ? [a.address] : (a.group ?? []).map((g) => g.address)));
}
