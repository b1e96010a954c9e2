// How a webhook attempt is signed, for the server that signs and for
// `verifyWebhookSignature` in the user's app: HMAC-SHA256 with the
// registration's secret over `<timestamp>.<body>`, the exact bytes sent,
// the timestamp (Unix seconds) inside the signed text so an old request
// replayed later can be refused. Stripe's layout:
//
//   mailroom-signature: t=1764639300,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
//
// The other headers of an attempt say what it is without parsing the body.
import { createHmac } from 'node:crypto';

export const WEBHOOK_HEADERS = Object.freeze({
  /** The event's id: the same on every attempt and every duplicate of that event (deduplicate on it). */
  eventId: 'mailroom-event-id',
  eventType: 'mailroom-event-type',
  /** 1 for an event's first attempt, 2 for its first retry, ... (a replay goes on counting). */
  attempt: 'mailroom-attempt',
  /** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`. */
  signature: 'mailroom-signature',
});

/** The hex HMAC-SHA256 of `<timestamp>.<body>` under `secret`. */
export function webhookSignature(secret: string, timestampSeconds: number, body: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex');
}

/** The `mailroom-signature` header's value. */
export function signatureHeader(secret: string, timestampSeconds: number, body: string | Buffer): string {
  return `t=${timestampSeconds},v1=${webhookSignature(secret, timestampSeconds, body)}`;
}

/** The header's parts: its timestamp and every `v1` signature (a rotated secret may add more than one), or undefined when malformed. */
export function parseSignatureHeader(value: string): { readonly timestamp: number; readonly signatures: readonly string[] } | undefined {
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) return undefined;
    const key = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(v)) return undefined;
      timestamp = Number(v);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(v)) return undefined;
      signatures.push(v);
    }
  }
  return timestamp === undefined || signatures.length === 0 ? undefined : { timestamp, signatures };
}
