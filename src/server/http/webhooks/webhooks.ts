// The webhooks' HTTP calls (docs/CONTRACT.md, "Webhooks", an
// embedded-server extension): register, list, read and remove webhooks,
// read one's delivery log and dead letters, and replay a dead letter.
// None draws on a budget: a test registers a few and its matcher reads the
// log a few times a second.
import type { IncomingMessage } from 'node:http';
import { Refusal } from '../../../contract/refusal.js';
import type { WireDeadLetter, WireDeadLetters, WireWebhookAttempt, WireWebhookDeliveries, WireWebhookDelivery } from '../../../contract/webhook-wire.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import { toWireWebhook, type Webhook } from '../../webhooks/registration.js';
import { waitsForConfirmation } from '../../webhooks/subscription.js';
import { TooManyWebhooksError, type WebhookService } from '../../webhooks/webhook-service.js';
import type { Delivery, DeliveryAttempt } from '../../webhooks/webhook-store.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import { singleParam } from '../edge/params.js';
import type { Reply } from '../edge/reply.js';

export type WebhookCall = 'list' | 'add' | 'get' | 'remove' | 'deliveries' | 'deadLetters' | 'replay';

export interface WebhookContext {
  readonly webhooks: WebhookService;
  readonly reader: MailboxReader;
}

const MAX_WEBHOOK_BODY = BODY_LIMITS.webhook;
const EXAMPLE = '{"url": "http://127.0.0.1:3000/webhooks/mail", "events": ["message.received"], "retry": {"max_attempts": 5, "initial_delay_ms": 200}}';
const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

function wireAttempt(a: DeliveryAttempt): WireWebhookAttempt {
  return {
    attempt: a.attempt,
    at: new Date(a.at).toISOString(),
    status: a.status ?? null,
    latency_ms: a.latencyMs,
    outcome: a.outcome,
    reason: a.reason,
    next_delay_ms: a.nextDelayMs ?? null,
    copy: a.copy,
  };
}

/** A delivery as the log shows it; `unconfirmed`: its webhook's subscription is (subscription.ts), so its notifications are held. */
function wireDelivery(d: Delivery, webhook: Webhook, unconfirmed: boolean): WireWebhookDelivery {
  const held = unconfirmed && d.state === 'pending' && waitsForConfirmation(webhook, d.event.type);
  return {
    event_id: d.event.id,
    event_type: d.event.type,
    address: d.event.address,
    created_at: new Date(d.event.createdAt).toISOString(),
    state: d.state,
    next_attempt_at: d.state === 'pending' && !held ? iso(d.nextAttemptAt) : null,
    attempts: d.attempts.map(wireAttempt),
    ...(held ? { held: 'subscription_unconfirmed' as const } : {}),
  };
}

function wireDeadLetter(d: Delivery): WireDeadLetter {
  return {
    event_id: d.event.id,
    event_type: d.event.type,
    address: d.event.address,
    dead_at: iso(d.deadAt)!,
    reason: d.attempts.at(-1)?.reason ?? 'unknown',
    payload_excerpt: d.excerpt ?? '',
    attempts: d.attempts.map(wireAttempt),
  };
}

async function jsonBody(req: IncomingMessage): Promise<unknown> {
  const raw = await readBodyUpTo(req, MAX_WEBHOOK_BODY);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `A webhook's body is at most ${MAX_WEBHOOK_BODY} bytes`);
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalid_request', `The body must be a JSON webhook registration, like ${EXAMPLE}`);
  }
}

function noWebhook(id: string): Refusal {
  return new Refusal(404, 'not_found', `No webhook ${id}: it was removed (or its mailbox deleted), or never registered here`);
}

/** The answer's status and JSON body; refusals are thrown as `Refusal`. */
export async function answerWebhooks(
  call: WebhookCall,
  ids: { readonly id?: string | undefined; readonly eventId?: string | undefined },
  params: URLSearchParams,
  req: IncomingMessage,
  ctx: WebhookContext,
): Promise<{ readonly status: number; readonly body: unknown }> {
  const { webhooks } = ctx;
  const id = ids.id ?? '';
  switch (call) {
    case 'add': {
      const body = await jsonBody(req);
      try {
        return { status: 201, body: { webhook: toWireWebhook(await webhooks.register(body)) } };
      } catch (error) {
        if (error instanceof Refusal) throw error;
        if (error instanceof TypeError || error instanceof TooManyWebhooksError) throw new Refusal(400, 'invalid_request', `Invalid webhook: ${error.message}`);
        throw error;
      }
    }
    case 'list': {
      const address = singleParam(params, 'address');
      const key = address === undefined ? undefined : ctx.reader.mailboxKey(address, 'address');
      return { status: 200, body: { webhooks: webhooks.list(key).map(toWireWebhook) } };
    }
    case 'get': {
      const webhook = webhooks.get(id);
      if (!webhook) throw noWebhook(id);
      return { status: 200, body: { webhook: toWireWebhook(webhook) } };
    }
    case 'remove':
      // Idempotent, like every delete of the contract.
      return { status: 200, body: { deleted: (await webhooks.remove(id)) !== undefined } };
    case 'deliveries': {
      const webhook = webhooks.get(id);
      if (!webhook) throw noWebhook(id);
      // `address`: only the events at that mailbox (the web UI's tab for one mailbox, on a webhook that hears every address).
      const address = singleParam(params, 'address');
      const key = address === undefined ? undefined : ctx.reader.mailboxKey(address, 'address');
      const deliveries = (await webhooks.deliveries(id)).filter((d) => key === undefined || d.event.address === key);
      const unconfirmed = await webhooks.unconfirmed(id);
      return {
        status: 200,
        body: { webhook_id: id, deliveries: deliveries.map((d) => wireDelivery(d, webhook, unconfirmed)) } satisfies WireWebhookDeliveries,
      };
    }
    case 'deadLetters': {
      if (!webhooks.get(id)) throw noWebhook(id);
      const dead = (await webhooks.deliveries(id)).filter((d) => d.state === 'dead_lettered');
      return { status: 200, body: { webhook_id: id, dead_letters: dead.map(wireDeadLetter) } satisfies WireDeadLetters };
    }
    case 'replay': {
      const webhook = webhooks.get(id);
      if (!webhook) throw noWebhook(id);
      const eventId = ids.eventId ?? '';
      const replayed = await webhooks.replay(id, eventId);
      if (!replayed) throw new Refusal(404, 'not_found', `No dead letter ${eventId} at webhook ${id}: it was delivered, is still pending, or never existed`);
      return { status: 202, body: { replayed: eventId, delivery: wireDelivery(replayed, webhook, await webhooks.unconfirmed(id)) } };
    }
  }
}

/** `GET /metrics`: the webhooks' counters in Prometheus text format. */
export async function answerMetrics(webhooks: WebhookService): Promise<Reply> {
  const { metrics } = webhooks;
  return { status: 200, headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' }, body: await metrics.text() };
}
