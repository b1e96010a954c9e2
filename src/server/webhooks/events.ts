// The events a webhook is sent, made from what the SMTP intake published
// (smtp/attempts.ts): `message.received` for an accepted mail,
// `delivery.deferred` and `delivery.rejected` for a 4xx or 5xx reply at an
// address.
//
// Making an event costs the SMTP path almost nothing: an id and a reference
// to the stored message (or the attempt). What is sent is made later, when
// a delivery goes: the payload (delivery-job.ts) is read from the message
// then, and the body - the parsed message as the API shows it, serialised -
// is built from it once, in the delivery thread (threaded-sender.ts), and
// reused by every attempt and duplicate, so the bytes signed are the bytes
// sent, every time.
import { randomUUID } from 'node:crypto';
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { WireDeliveryOutcome, WireWebhookEvent } from '../../contract/webhook-wire.js';
import type { SmtpAttempt } from '../smtp/attempts.js';
import type { StoredMessage } from '../store/mail-store.js';
import type { EventEnvelope, EventPayload } from './delivery-job.js';

export interface WebhookEvent {
  readonly id: string;
  readonly type: WebhookEventType;
  /** The mailbox the event is about. */
  readonly address: string;
  /** Wall-clock ms. */
  readonly createdAt: number;
  /**
   * What the sender builds the body from: plain data, made on first call and
   * then the same. A promise, since a message's source may live in a shared
   * store (the memory store's resolves at once).
   */
  payload(): Promise<EventPayload>;
}

/** `evt_` and 32 hex digits: unique across servers and restarts, so a receiver can deduplicate on it alone. */
export function eventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/** `make` called once and its promise kept, unless it rejects: the next call tries again (a store out of reach for a moment). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () =>
    (made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    }));
}

function envelope(id: string, type: WebhookEventType, address: string, createdAt: number): EventEnvelope {
  return { id, type, created_at: new Date(createdAt).toISOString(), address };
}

/** `message.received` for a stored message; `rawUrl` is where its source is served. */
export function messageReceived(message: StoredMessage, rawUrl: (message: StoredMessage) => string): WebhookEvent {
  const id = eventId();
  return {
    id,
    type: 'message.received',
    address: message.mailbox,
    createdAt: message.receivedAt,
    payload: once(async () => ({
      kind: 'message',
      envelope: envelope(id, 'message.received', message.mailbox, message.receivedAt),
      message: {
        id: message.id,
        receivedAt: message.receivedAt,
        size: message.size,
        envelopeFrom: message.content.envelopeFrom,
        source: (await message.content.source()).toString('latin1'),
      },
      rawUrl: rawUrl(message),
    })),
  };
}

/** `delivery.deferred` (4xx) or `delivery.rejected` (5xx) for an SMTP refusal at an address: a small body, built here. */
export function deliveryOutcome(attempt: SmtpAttempt & { readonly code: number }): WebhookEvent {
  const id = eventId();
  const type = attempt.outcome === 'rejected' ? 'delivery.rejected' : 'delivery.deferred';
  return {
    id,
    type,
    address: attempt.to,
    createdAt: attempt.at,
    payload: once(async () => {
      const data: WireDeliveryOutcome = {
        from: attempt.from,
        to: attempt.to,
        client_ip: attempt.clientIp,
        stage: attempt.stage,
        code: attempt.code,
        enhanced_code: attempt.enhancedCode ?? null,
        text: attempt.text,
        outcome: attempt.outcome,
        rule: attempt.rule ?? null,
        message_id: attempt.headerMessageId ?? null,
        subject: attempt.headerSubject ?? null,
      };
      const event = { ...envelope(id, type, attempt.to, attempt.at), data } as WireWebhookEvent;
      return { kind: 'json', body: JSON.stringify(event) };
    }),
  };
}
