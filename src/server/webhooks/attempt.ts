// One attempt of a delivery, as both dispatchers make it (dispatcher.ts for
// a store kept by one server, shared-dispatcher.ts for a shared one): the
// request handed to the sender, and what its answer does to the delivery -
// the seed's retry strategy in one place:
//
// - the answer classified (classify.ts): delivered, retried, or
//   dead-lettered at once with its reason;
// - a retry after an exponential backoff with a cap, jitter added on top
//   (contract/backoff.ts), or after exactly the receiver's `Retry-After`;
// - a cap on attempts that stops exactly there (the first one counts);
// - `duplicates`: a delivered copy is followed at once by the next one.
import { backoffStep, withJitter } from '../../contract/backoff.js';
import type { RandomSource } from '../../contract/random.js';
import type { WebhookAttemptOutcome } from '../../contract/webhooks.js';
import { WEBHOOK_HEADERS } from '../../contract/webhook-signature.js';
import { Refusal } from '../../contract/refusal.js';
import { classify } from './classify.js';
import { MessageGoneError } from './events.js';
import type { DeliveryJob, DeliveryOutcome, EventPayload } from './delivery-job.js';
import type { Webhook } from './registration.js';
import type { Delivery, DeliveryAttempt } from './webhook-store.js';

const USER_AGENT = 'mailroom-webhooks/0.1';

/** The number the next attempt of the delivery's current copy goes out with: 1, then 2 for its first retry, … */
export function nextAttemptNumber(delivery: Delivery): number {
  // Counted, not filtered into an array: asked twice per attempt on the SMTP thread.
  let n = 1;
  for (const a of delivery.attempts) if (a.copy === delivery.copy) n++;
  return n;
}

/** What the sender is handed for one attempt (`at`: when it goes, wall-clock ms; the signature's timestamp). */
export function attemptJob(webhook: Webhook, delivery: Delivery, attempt: number, at: number, payload: EventPayload): DeliveryJob {
  return {
    eventId: delivery.event.id,
    payload,
    url: webhook.url,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': USER_AGENT,
      [WEBHOOK_HEADERS.eventId]: delivery.event.id,
      [WEBHOOK_HEADERS.eventType]: delivery.event.type,
      [WEBHOOK_HEADERS.attempt]: String(attempt),
    },
    secret: webhook.secret,
    ...(webhook.format === undefined || webhook.format === 'mailroom' ? {} : { format: webhook.format }),
    at,
    timeoutMs: webhook.timeoutMs,
  };
}

/**
 * The outcome of an attempt whose payload could not be made: nothing went
 * out. The event's mail is gone: dead-lettered at once (`gone`). The store
 * did not answer: retried like a network failure (`unavailable`).
 */
export function unavailable(error: unknown): DeliveryOutcome {
  if (error instanceof MessageGoneError) return { result: { kind: 'failure', reason: 'gone', detail: error.message }, latencyMs: 0, excerpt: '' };
  return {
    result: { kind: 'failure', reason: 'unavailable', detail: `the message could not be read from the store: ${String(error)}` },
    latencyMs: 0,
    excerpt: '',
  };
}

/**
 * Records attempt `attempt` (begun at `at`) and what its outcome means:
 * the delivery's state, copy, retry count and next attempt time change in
 * place. Returns the attempt as recorded.
 */
export function settle(
  delivery: Delivery,
  webhook: Webhook,
  attempt: { readonly number: number; readonly at: number },
  posted: DeliveryOutcome,
  now: number,
  random: RandomSource,
): DeliveryAttempt {
  const verdict = classify(posted.result, now);
  delivery.cycleAttempts++;
  // The attempt is made once, with its outcome, as one literal (the keys in the order the log shows them), not a partial record spread into it.
  const copy = delivery.copy;
  const status = posted.result.kind === 'answer' ? posted.result.status : undefined;
  const latencyMs = Math.round(posted.latencyMs * 100) / 100;
  let outcome: WebhookAttemptOutcome;
  let nextDelayMs: number | undefined;
  if (verdict.delivered) {
    outcome = 'delivered';
    if (delivery.copy < webhook.duplicates) {
      // The next copy of the same event goes at once, with the same id: a handler must count it once.
      delivery.copy++;
      delivery.cycleAttempts = 0;
      delivery.nextAttemptAt = now;
    } else {
      delivery.state = 'delivered';
      delivery.nextAttemptAt = undefined;
    }
  } else if (verdict.retry && delivery.cycleAttempts < webhook.retry.maxAttempts) {
    const wait = verdict.retryAfterMs ?? withJitter(backoffStep(webhook.retry, delivery.cycleAttempts), random);
    outcome = 'retrying';
    nextDelayMs = Math.round(wait);
    delivery.nextAttemptAt = now + nextDelayMs;
  } else {
    if (verdict.reason === 'cancelled') delivery.state = 'cancelled';
    else {
      delivery.state = 'dead_lettered';
      delivery.deadAt = now;
      delivery.excerpt = posted.excerpt;
    }
    outcome = 'failed';
    delivery.nextAttemptAt = undefined;
  }
  const finished: DeliveryAttempt = { attempt: attempt.number, copy, at: attempt.at, status, latencyMs, reason: verdict.reason, outcome, nextDelayMs };
  delivery.attempts.push(finished);
  return finished;
}

/** Attempts one delivery keeps in its log, replays included: a replay past this is refused (`replayRefusal`). */
export const MAX_ATTEMPTS_PER_DELIVERY = 1_000;

/** Why `delivery` may not be replayed again (its log of attempts is full), or undefined. */
export function replayRefusal(delivery: Pick<Delivery, 'attempts'> & { readonly event: { readonly id: string } }): Refusal | undefined {
  if (delivery.attempts.length < MAX_ATTEMPTS_PER_DELIVERY) return undefined;
  return new Refusal(
    409,
    'invalid_request',
    `Dead letter ${delivery.event.id} has been attempted ${delivery.attempts.length} times; it is replayed at most until ${MAX_ATTEMPTS_PER_DELIVERY} attempts. Fix the receiver and send a new event instead`,
  );
}
