// One attempt as the dispatcher hands it to a sender: plain data only, so it
// can cross to the delivery thread (thread.ts) by structured clone. The
// event travels as its payload - for `message.received` the message's source
// and fields, not its parsed view - and the body is built, signed and sent
// on the other side, off the thread that runs SMTP.
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { AttemptResult } from './classify.js';

/** The event's envelope, the same for every attempt. */
export interface EventEnvelope {
  readonly id: string;
  readonly type: WebhookEventType;
  /** RFC 3339. */
  readonly created_at: string;
  readonly address: string;
}

export type EventPayload =
  /** A body built already (delivery outcomes: a few fields from the SMTP reply). */
  | { readonly kind: 'json'; readonly body: string }
  /** `message.received`: the body is the message's API view, parsed from its source where it is sent. */
  | {
      readonly kind: 'message';
      readonly envelope: EventEnvelope;
      readonly message: {
        readonly id: string;
        readonly receivedAt: number;
        readonly size: number;
        readonly envelopeFrom: string;
        /** The source, as latin1 (one character per byte): a string crosses threads without copying a whole pooled buffer. */
        readonly source: string;
      };
      readonly rawUrl: string;
    };

export interface DeliveryJob {
  readonly eventId: string;
  readonly payload: EventPayload;
  readonly url: string;
  /** Every header but the signature, which is made where the body is. */
  readonly headers: Readonly<Record<string, string>>;
  readonly secret: string;
  readonly timestampSeconds: number;
  readonly timeoutMs: number;
}

export interface DeliveryOutcome {
  readonly result: AttemptResult;
  /** From the request going out to the answer's head (or the failure), ms. */
  readonly latencyMs: number;
  /** The start of the body that was sent, for an attempt that did not deliver (a dead letter keeps it); empty otherwise. */
  readonly excerpt: string;
}

/** Where the dispatcher sends attempts: in this thread (tests) or in the delivery thread (the server). */
export interface DeliverySender {
  post(job: DeliveryJob, signal: AbortSignal): Promise<DeliveryOutcome>;
  /** Gets ready for a first attempt (the delivery thread: started and warmed up), when a webhook is registered. */
  warm?(): void;
  close(): Promise<void>;
}

/** A dead letter keeps this much of the body it could not deliver. */
export const EXCERPT_CHARS = 512;
