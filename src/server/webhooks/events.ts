// The events a webhook is sent, made from what the SMTP intake published
// (smtp/attempts.ts): `message.received` for an accepted mail,
// `delivery.deferred` and `delivery.rejected` for a 4xx or 5xx reply at an
// address.
//
// Making an event costs the SMTP path almost nothing: it keeps a reference
// to the stored message (or the attempt) and an id. The body - the parsed
// message as the API shows it, serialised - is built once, when a delivery
// worker first needs it, off the path of the mail; every attempt, every
// duplicate and every endpoint that wants the event reuse that one string,
// so the bytes signed are the bytes sent, every time.
import { randomUUID } from 'node:crypto';
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { WireDeliveryOutcome, WireMessageReceived, WireWebhookEvent } from '../../contract/webhook-wire.js';
import type { WireMessage } from '../../contract/wire.js';
import type { SmtpAttempt } from '../smtp/attempts.js';
import type { StoredMessage } from '../store/message-store.js';

export interface WebhookEvent {
  readonly id: string;
  readonly type: WebhookEventType;
  /** The mailbox the event is about. */
  readonly address: string;
  /** Wall-clock ms. */
  readonly createdAt: number;
  /** The JSON body, built on first call and then the same string every time. */
  body(): Promise<string>;
}

export interface EventSources {
  /** The message as `GET /api/v1/message/{id}` shows it. */
  readonly wireMessage: (message: StoredMessage) => Promise<WireMessage>;
  /** Where its raw source is served. */
  readonly rawUrl: (message: StoredMessage) => string;
}

/** `evt_` and 32 hex digits: unique across servers and restarts, so a receiver can deduplicate on it alone. */
export function eventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

function once(build: () => Promise<string>): () => Promise<string> {
  let built: Promise<string> | undefined;
  return () => (built ??= build());
}

function envelope<T extends WebhookEventType>(id: string, type: T, address: string, createdAt: number, data: WireWebhookEvent<T>['data']): string {
  const event: WireWebhookEvent<T> = { id, type, created_at: new Date(createdAt).toISOString(), address, data };
  return JSON.stringify(event);
}

/** `message.received` for a stored message. */
export function messageReceived(message: StoredMessage, sources: EventSources): WebhookEvent {
  const id = eventId();
  const createdAt = message.receivedAt;
  return {
    id,
    type: 'message.received',
    address: message.mailbox,
    createdAt,
    body: once(async () => {
      const data: WireMessageReceived = { message: await sources.wireMessage(message), raw_url: sources.rawUrl(message) };
      return envelope(id, 'message.received', message.mailbox, createdAt, data);
    }),
  };
}

/** `delivery.deferred` (4xx) or `delivery.rejected` (5xx) for an SMTP refusal at an address. */
export function deliveryOutcome(attempt: SmtpAttempt & { readonly code: number }): WebhookEvent {
  const id = eventId();
  const type = attempt.outcome === 'rejected' ? 'delivery.rejected' : 'delivery.deferred';
  return {
    id,
    type,
    address: attempt.to,
    createdAt: attempt.at,
    body: once(() => {
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
      return Promise.resolve(envelope(id, type, attempt.to, attempt.at, data));
    }),
  };
}
