// A provider call's body, read whole under a cap (edge/body.ts) and then
// parsed as the provider sends it: JSON (SES v2, SendGrid, Resend,
// Postmark, Brevo), a form (SES v1's query protocol) or multipart form data
// (Mailgun, its attachments as files), the last by busboy, the parser
// Fastify and undici were built on. A body that does not parse is the
// dialect's `invalid` failure, in the provider's words; one over the cap its
// `too_large`, answered once the rest was read and dropped.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Busboy } from '@fastify/busboy';
import { ApiFailureError, fail } from '../../providers/api-send.js';
import { readBodyUpTo } from '../edge/body.js';

export type BodyKind = 'json' | 'form' | 'multipart';

export interface FormFile {
  readonly filename: string | undefined;
  readonly contentType: string | undefined;
  readonly content: Buffer;
}

/** A form's fields in their order, each name as often as it was sent (Mailgun's `to`, `o:tag`). */
export interface FormBody {
  readonly fields: readonly (readonly [string, string])[];
  readonly files: readonly (readonly [string, FormFile])[];
}

export type ProviderBody = { readonly kind: 'json'; readonly value: unknown } | ({ readonly kind: 'form' } & FormBody);

/**
 * The most a provider call's body may be: a message of `maxMessageBytes`
 * sent as base64 inside JSON (a third more) with room for its fields.
 */
export function bodyCapFor(maxMessageBytes: number): number {
  return Math.ceil((maxMessageBytes * 4) / 3) + 256 * 1024;
}

/** Most parts a multipart body may have (Mailgun's fields and files); more is a malformed call. */
const MAX_PARTS = 10_000;

export async function readProviderBody(req: IncomingMessage, kind: BodyKind, cap: number): Promise<ProviderBody> {
  const raw = await readBodyUpTo(req, cap);
  if (raw === undefined) return fail({ kind: 'too_large', detail: `The request body is over this server's limit of ${cap} bytes` });
  switch (kind) {
    case 'json':
      return { kind: 'json', value: parseJson(raw) };
    case 'form':
      return { kind: 'form', fields: [...new URLSearchParams(raw.toString('utf8'))], files: [] };
    case 'multipart':
      return { kind: 'form', ...(await parseMultipart(raw, req.headers, cap)) };
  }
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    return fail({ kind: 'invalid', detail: `The request body is not valid JSON: ${(error as Error).message}` });
  }
}

/** A `multipart/form-data` body (or, as Mailgun also takes, a urlencoded one) as its fields and files. */
function parseMultipart(raw: Buffer, headers: IncomingHttpHeaders, cap: number): Promise<FormBody> {
  const type = headers['content-type'] ?? '';
  if (/^application\/x-www-form-urlencoded/i.test(type)) return Promise.resolve({ fields: [...new URLSearchParams(raw.toString('utf8'))], files: [] });
  if (!/^multipart\/form-data/i.test(type)) {
    return Promise.reject(new ApiFailureError({ kind: 'invalid', detail: `Expected a multipart/form-data body, got Content-Type ${JSON.stringify(type)}` }));
  }
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    const files: [string, FormFile][] = [];
    const refuse = (detail: string) => reject(new ApiFailureError({ kind: 'invalid', detail }));
    let parser;
    try {
      parser = Busboy({ headers: { ...headers, 'content-type': type }, limits: { fieldSize: cap, fileSize: cap, parts: MAX_PARTS } });
    } catch (error) {
      return refuse(`The multipart body cannot be read: ${(error as Error).message}`);
    }
    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (name, stream, filename, _encoding, mimeType) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push([name, { filename: filename || undefined, contentType: mimeType || undefined, content: Buffer.concat(chunks) }]));
    });
    parser.on('partsLimit', () => refuse(`The multipart body has more than ${MAX_PARTS} parts`));
    parser.on('error', (error) => refuse(`The multipart body is malformed: ${(error as Error).message}`));
    parser.on('finish', () => resolve({ fields, files }));
    parser.end(raw);
  });
}
