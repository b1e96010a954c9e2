// An event's JSON body, built from its payload (delivery-job.ts) where it is
// sent. For `message.received` that means parsing the message's source into
// the API's message view (store/mailbox-reader.ts, the same code as `GET
// /api/v1/message/{id}`): the costly part of a webhook, which is why it
// happens in the delivery thread and never on the SMTP path. The source is
// parsed as it came (a latin1 string: the fast path reads it without a
// Buffer, store/fast-parse.ts), and nothing of the parse is kept: a body is
// built once per event and then cached whole.
import type { WireMessageReceived, WireWebhookEvent } from '../../contract/webhook-wire.js';
import { wireMessageFrom } from '../store/mailbox-reader.js';
import { parseSource } from '../store/message-content.js';
import type { EventPayload } from './delivery-job.js';

export async function buildBody(payload: EventPayload): Promise<string> {
  if (payload.kind === 'json') return payload.body;
  const { envelope, message } = payload;
  const data: WireMessageReceived = { message: wireMessageFrom(message, await parseSource(message.source)), raw_url: payload.rawUrl };
  // Spelled out, not `{ ...envelope }`. Measured, not a rule of V8's (a plain spread is allocated young): with the
  // spreads on this path (here, wireMessageFrom, fast-parse, mime-parse, the sender's headers) a run of deliveries
  // (bench/delivery-thread.ts, --trace-gc) promoted ~94 MB to the old generation, without them ~7 MB, and the
  // scavenges took a fifth of the time. Measure before bringing one back.
  const event: WireWebhookEvent<'message.received'> = {
    id: envelope.id,
    type: 'message.received',
    created_at: envelope.created_at,
    address: envelope.address,
    data,
  };
  return JSON.stringify(event);
}

/**
 * Bodies by event id, so a retry does not parse again. Bounded in bytes as
 * well as count: the oldest go first. A body that has gone is built again
 * from the payload, the same bytes, so every attempt and duplicate sends the
 * same body whether it was kept or not. A delivered event's body is let go
 * (`forget`): kept, every delivered body would outlive V8's young
 * generation and be left to a full collection, for the rare duplicate that
 * would reuse it.
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

  /** Lets the body go (its event was delivered); a later attempt or duplicate builds it again. */
  forget(eventId: string): void {
    const entry = this.#bodies.get(eventId);
    if (!entry) return;
    this.#bodies.delete(eventId);
    this.#bytes -= entry.bytes;
  }

  #trim(): void {
    for (const [id, entry] of this.#bodies) {
      if (this.#bodies.size <= this.#maxEntries && this.#bytes <= this.#maxBytes) break;
      this.#bodies.delete(id);
      this.#bytes -= entry.bytes;
    }
  }
}
