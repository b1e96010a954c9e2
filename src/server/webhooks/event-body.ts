// An event's JSON body, built from its payload (delivery-job.ts) where it is
// sent. For `message.received` that means parsing the message's source into
// the API's message view (store/mailbox-reader.ts, the same code as `GET
// /api/v1/message/{id}`): the costly part of a webhook, which is why it
// happens in the delivery thread and never on the SMTP path.
import type { WireMessageReceived, WireWebhookEvent } from '../../contract/webhook-wire.js';
import { wireMessageOf } from '../store/mailbox-reader.js';
import { MessageContent, ParseCache } from '../store/message-content.js';
import type { EventPayload } from './delivery-job.js';

/** Only the parse in progress is worth keeping: a body is built once per event and then cached whole. */
const parses = new ParseCache(8);

export async function buildBody(payload: EventPayload): Promise<string> {
  if (payload.kind === 'json') return payload.body;
  const { envelope, message } = payload;
  const content = new MessageContent(message.source, message.envelopeFrom, parses);
  const data: WireMessageReceived = {
    message: await wireMessageOf({ id: message.id, receivedAt: message.receivedAt, size: message.size, content }),
    raw_url: payload.rawUrl,
  };
  const event: WireWebhookEvent<'message.received'> = { ...envelope, type: 'message.received', data };
  return JSON.stringify(event);
}

/**
 * Bodies by event id, so every attempt and duplicate sends the same bytes
 * (and a retry does not parse again). Bounded in bytes as well as count:
 * the oldest go first. A body that has gone is built again from the
 * payload, the same bytes.
 */
export class BodyCache {
  readonly #bodies = new Map<string, { readonly body: Promise<string>; bytes: number }>();
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxEntries = 2_000, maxBytes = 32 * 1024 * 1024) {
    this.#maxEntries = maxEntries;
    this.#maxBytes = maxBytes;
  }

  /** The bytes of the bodies held (UTF-16 string length counts as one byte a character: the bodies are mostly ASCII). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#bodies.size;
  }

  get(eventId: string, payload: EventPayload): Promise<string> {
    const found = this.#bodies.get(eventId);
    if (found) return found.body;
    const body = buildBody(payload);
    const entry = { body, bytes: 0 };
    this.#bodies.set(eventId, entry);
    body.then(
      (built) => {
        if (this.#bodies.get(eventId) !== entry) return;
        entry.bytes = built.length;
        this.#bytes += built.length;
        this.#trim();
      },
      () => {
        if (this.#bodies.get(eventId) === entry) this.#bodies.delete(eventId);
      },
    );
    this.#trim();
    return body;
  }

  #trim(): void {
    for (const [id, entry] of this.#bodies) {
      if (this.#bodies.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#bodies.delete(id);
      this.#bytes -= entry.bytes;
    }
  }
}
