// One attempt as the dispatcher hands it to a sender: plain data only, so it
// can cross to the delivery thread (thread.ts) by structured clone. The
// event travels as its payload - for `message.received` the message's source
// and fields, not its parsed view - and the body is built, signed and sent
// on the other side, off the thread that runs SMTP.
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { ProviderFormat } from '../../contract/provider-events.js';
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
  /** A body built already (delivery outcomes: a few fields from the SMTP reply; provider events, with their own `headers`). */
  | { readonly kind: 'json'; readonly body: string; readonly headers?: Readonly<Record<string, string>> }
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
  /** A provider-format webhook's format: the attempt is signed as that provider signs (provider-events/formats.ts), not with `mailroom-signature`. */
  readonly format?: ProviderFormat;
  /**
   * Wall-clock ms (the server's clock) when the job was handed over: when
   * it goes, or, later in a run, when the run began (the outcome says how
   * long after that it went, and the signature's timestamp is that moment).
   */
  readonly at: number;
  readonly timeoutMs: number;
}

export interface DeliveryOutcome {
  readonly result: AttemptResult;
  /** From the request going out to the answer's head (or the failure), ms. */
  readonly latencyMs: number;
  /** The start of the body that was sent, for an attempt that did not deliver (a dead letter keeps it); empty otherwise. */
  readonly excerpt: string;
  /** In a run (`postRun`): how long after the run began this attempt went out, ms (0, or absent, for the first). */
  readonly startedAfterMs?: number;
}

/** A 2xx answer: the only outcome after which a run goes on to its next job (classify.ts says the same). */
export function delivered(outcome: Pick<DeliveryOutcome, 'result'>): boolean {
  return outcome.result.kind === 'answer' && outcome.result.status >= 200 && outcome.result.status < 300;
}

/** Where the dispatcher sends attempts: in this thread (tests) or in the delivery thread (the server). */
export interface DeliverySender {
  post(job: DeliveryJob, signal: AbortSignal): Promise<DeliveryOutcome>;
  /**
   * An ordered endpoint's next due events as one run: the jobs go one at a
   * time, in order, exactly as one `post` after another would, and the run
   * stops after the first attempt that did not deliver (a failing event
   * holds back the ones after it). The outcomes of the jobs attempted, in
   * order; those after them were not sent. One hand-over and one answer for
   * the run, not one per event: the SMTP thread's cost of a backlog.
   */
  postRun?(jobs: readonly DeliveryJob[], signal: AbortSignal): Promise<readonly DeliveryOutcome[]>;
  /** Gets ready for a first attempt (the delivery thread: started and warmed up), when a webhook is registered. */
  warm?(): void;
  close(): Promise<void>;
}

/** A dead letter keeps this much of the body it could not deliver. */
export const EXCERPT_CHARS = 512;
