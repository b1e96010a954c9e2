// One attachment of a message, out of its source, for `get_attachment`:
// text inline when it is text, base64 otherwise, refused past a size cap an
// agent's context can hold. Both backends hand over the source (the `raw`
// call) and the attachment is read here, with the same parser the server
// lists attachments with, so the index an agent saw in `attachments` picks
// the same part.
import PostalMime from 'postal-mime';
import { MCP_MAX_ATTACHMENT_BYTES } from '../contract/limits.js';
import { Refusal } from '../contract/refusal.js';

export interface AttachmentChoice {
  readonly address: string;
  readonly id: string;
  /** Position in the message's `attachments`, from 0. */
  readonly index?: number | undefined;
  readonly filename?: string | undefined;
}

export type AttachmentContent = {
  readonly filename: string | null;
  readonly content_type: string;
  readonly size: number;
  readonly index: number;
} & ({ readonly encoding: 'text'; readonly text: string } | { readonly encoding: 'base64'; readonly base64: string });

const TEXT_TYPES = /^(text\/|application\/(json|xml|csv|javascript|x-ndjson|[\w.+-]+\+(json|xml)))/i;

export async function readAttachment(source: Uint8Array, choice: AttachmentChoice): Promise<AttachmentContent> {
  if ((choice.index === undefined) === (choice.filename === undefined)) {
    throw new Refusal(400, 'invalid_request', 'Name the attachment by exactly one of `index` (its position in `attachments`, from 0) or `filename`');
  }
  const { attachments } = await PostalMime.parse(source);
  const names = attachments.map((a, i) => `${i}: ${a.filename ?? '(unnamed)'}`).join(', ') || 'none';
  const index = choice.index ?? attachments.findIndex((a) => a.filename === choice.filename);
  const attachment = attachments[index];
  if (!attachment) {
    const asked = choice.filename === undefined ? `index ${choice.index}` : `filename ${JSON.stringify(choice.filename)}`;
    throw new Refusal(404, 'not_found', `Message ${choice.id} at ${choice.address} has no attachment with ${asked}; its attachments are: ${names}`);
  }
  const bytes = asBuffer(attachment.content);
  if (bytes.byteLength > MCP_MAX_ATTACHMENT_BYTES) {
    throw new Refusal(
      413,
      'too_large',
      `Attachment ${index} (${attachment.filename ?? 'unnamed'}) of message ${choice.id} at ${choice.address} is ${bytes.byteLength} bytes, ` +
        `over the ${MCP_MAX_ATTACHMENT_BYTES} bytes this tool returns; fetch the source over the HTTP API (GET /api/v1/message/{id}/raw) instead`,
    );
  }
  const head = { filename: attachment.filename, content_type: attachment.mimeType, size: bytes.byteLength, index };
  const text = TEXT_TYPES.test(attachment.mimeType) ? utf8(bytes) : undefined;
  return text === undefined ? { ...head, encoding: 'base64', base64: bytes.toString('base64') } : { ...head, encoding: 'text', text };
}

function asBuffer(content: string | ArrayBuffer | Uint8Array): Buffer {
  if (typeof content === 'string') return Buffer.from(content);
  return content instanceof Uint8Array ? Buffer.from(content.buffer, content.byteOffset, content.byteLength) : Buffer.from(content);
}

/** The bytes as UTF-8, or undefined when they are not (a "text" part in another charset is returned as base64, not garbled). */
function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
