// The events a webhook is sent, made from what the SMTP intake published
// (base/smtp-attempts.ts): `message.received` for an accepted mail,
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
//
// On a shared store an event is kept as plain data (`record()`, an
// `EventRecord`): a message is named, not copied, and any server rebuilds
// the same payload from the record and the message's source (`payloadOf`),
// so the body is the same whichever server makes an attempt.
import { randomUUID } from 'node:crypto';
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { WireDeliveryOutcome, WireWebhookEvent } from '../../contract/webhook-wire.js';
import type { SmtpAttempt } from '../base/smtp-attempts.js';
import type { StoredMessage } from '../base/stored-message.js';
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
  /**
   * The event as plain data, for a store that keeps it where other servers
   * read it (a shared store): a message is named, not copied (its source is
   * read back from the store when an attempt goes, `payloadOf`).
   */
  record(): EventRecord;
}

/** What a shared store keeps of an event's payload: enough to build the same body on any server. */
export type EventRef =
  /** `headers`: a provider event's own (SES's `x-amz-sns-*`), sent on every attempt. */
  | { readonly kind: 'json'; readonly body: string; readonly headers?: Readonly<Record<string, string>> }
  | {
      readonly kind: 'message';
      readonly messageId: string;
      readonly receivedAt: number;
      readonly size: number;
      readonly envelopeFrom: string;
      readonly rawUrl: string;
    };

/** An event as plain data (`WebhookEvent.record()`). */
export interface EventRecord {
  readonly id: string;
  readonly type: WebhookEventType;
  readonly address: string;
  readonly createdAt: number;
  readonly ref: EventRef;
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

/** The second `isoDate` last formatted, and its text up to the milliseconds (`2026-01-02T03:04:05.`). */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * `new Date(ms).toISOString()`, with the text up to the second reused while
 * the second is the same: the events of a burst of mail share it, and the
 * Date and its formatting were a visible part of an attempt's cost on the
 * SMTP thread. A time that is not a whole ms is formatted in full.
 */
export function isoDate(ms: number): string {
  if (!Number.isInteger(ms)) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  if (second !== isoSecond) {
    const iso = new Date(ms).toISOString();
    isoPrefix = iso.slice(0, -4);
    isoSecond = second;
  }
  const millis = ms - second * 1000;
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
}

function envelope(id: string, type: WebhookEventType, address: string, createdAt: number): EventEnvelope {
  return { id, type, created_at: isoDate(createdAt), address };
}

/**
 * Where an event reads its message's source when an attempt goes: from the
 * store, by mailbox and id (a Buffer, or a latin1 string as the memory store
 * keeps a small one), or undefined once the mail is gone (expired, evicted,
 * deleted).
 */
export type SourceReader = (mailbox: string, id: string) => Promise<Buffer | string | undefined>;

/** The event's mail is no longer in the store: its delivery is dead-lettered at once with the reason `gone`, never retried. */
export class MessageGoneError extends Error {}

/**
 * `message.received` for a stored message; `rawUrl` is where its source is
 * served. The event names the message and keeps none of it: each attempt
 * reads the source from the store (`readSource`), so nothing of a mail
 * outlives its retention, eviction or deletion through a webhook's queue or
 * log. An attempt after the mail is gone is dead-lettered (`gone`).
 */
export function messageReceived(message: StoredMessage, rawUrl: (message: StoredMessage) => string, readSource: SourceReader): WebhookEvent {
  const id = eventId();
  return new MessageReceived(
    {
      id,
      type: 'message.received',
      address: message.mailbox,
      createdAt: message.receivedAt,
      ref: {
        kind: 'message',
        messageId: message.id,
        receivedAt: message.receivedAt,
        size: message.size,
        envelopeFrom: message.content.envelopeFrom,
        rawUrl: rawUrl(message),
      },
    },
    message.id,
    readSource,
  );
}

/**
 * A `message.received` event: its methods on the class, not closures made
 * per event (a webhook's log keeps up to 10,000 events, each of which
 * outlived the young collections with its closures and their context).
 */
class MessageReceived implements WebhookEvent {
  readonly id: string;
  readonly type = 'message.received';
  readonly address: string;
  readonly createdAt: number;
  readonly #recorded: EventRecord;
  readonly #messageId: string;
  readonly #readSource: SourceReader;

  constructor(recorded: EventRecord, messageId: string, readSource: SourceReader) {
    this.id = recorded.id;
    this.address = recorded.address;
    this.createdAt = recorded.createdAt;
    this.#recorded = recorded;
    this.#messageId = messageId;
    this.#readSource = readSource;
  }

  /** Not kept: a payload holds a copy of the source, made for the attempt and dropped after it. */
  async payload(): Promise<EventPayload> {
    return payloadOf(this.#recorded, await this.#readSource(this.address, this.#messageId));
  }

  record(): EventRecord {
    return this.#recorded;
  }
}

/**
 * The payload of a recorded event; `source` is the message's source, for
 * `message.received` (what `record()` named). The same record and source
 * give the same payload on every server, so every attempt sends the same body.
 */
export function payloadOf(record: EventRecord, source: Buffer | string | undefined): EventPayload {
  const { ref } = record;
  if (ref.kind === 'json') return { kind: 'json', body: ref.body, ...(ref.headers ? { headers: ref.headers } : {}) };
  if (source === undefined) throw new MessageGoneError(`the message ${ref.messageId} is no longer in the store (expired, evicted or deleted)`);
  return {
    kind: 'message',
    envelope: envelope(record.id, record.type, record.address, record.createdAt),
    message: {
      id: ref.messageId,
      receivedAt: ref.receivedAt,
      size: ref.size,
      envelopeFrom: ref.envelopeFrom,
      source: typeof source === 'string' ? source : source.toString('latin1'),
    },
    rawUrl: ref.rawUrl,
  };
}

/** A recorded event as the dispatcher takes it; `payload` is made from the record when an attempt goes. */
export function eventOf(record: EventRecord, payload: () => Promise<EventPayload>): WebhookEvent {
  return { id: record.id, type: record.type, address: record.address, createdAt: record.createdAt, payload: once(payload), record: () => record };
}

/** `delivery.deferred` (4xx) or `delivery.rejected` (5xx) for an SMTP refusal at an address: a small body, built here. */
export function deliveryOutcome(attempt: SmtpAttempt & { readonly code: number }): WebhookEvent {
  const id = eventId();
  const type = attempt.outcome === 'rejected' ? 'delivery.rejected' : 'delivery.deferred';
  const body = () => {
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
    return JSON.stringify(event);
  };
  return {
    id,
    type,
    address: attempt.to,
    createdAt: attempt.at,
    payload: once(async () => ({ kind: 'json', body: body() })),
    record: () => ({ id, type, address: attempt.to, createdAt: attempt.at, ref: { kind: 'json', body: body() } }),
  };
}
