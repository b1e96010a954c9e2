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
  const content = new MessageContent(Buffer.from(message.source, 'latin1'), message.envelopeFrom, parses);
  const data: WireMessageReceived = {
    message: await wireMessageOf({ id: message.id, receivedAt: message.receivedAt, size: message.size, content }),
    raw_url: payload.rawUrl,
  };
  const event: WireWebhookEvent<'message.received'> = { ...envelope, type: 'message.received', data };
  return JSON.stringify(event);
}

/** Bodies by event id, so every attempt and duplicate sends the same bytes; the oldest go past `max`. */
export class BodyCache {
  readonly #bodies = new Map<string, Promise<string>>();
  readonly #max: number;

  constructor(max = 2_000) {
    this.#max = max;
  }

  get(eventId: string, payload: EventPayload): Promise<string> {
    let body = this.#bodies.get(eventId);
    if (!body) {
      body = buildBody(payload);
      this.#bodies.set(eventId, body);
      body.catch(() => this.#bodies.delete(eventId));
      if (this.#bodies.size > this.#max) this.#bodies.delete(this.#bodies.keys().next().value!);
    }
    return body;
  }
}
