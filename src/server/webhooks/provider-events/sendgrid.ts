// SendGrid's Event Webhook, as SendGrid posts it with the Signed Event
// Webhook on (shared/research/provider-apis.md §4;
// twilio.com/docs/sendgrid/for-developers/tracking-events/event and
// .../getting-started-event-webhook-security-features; sendgrid-nodejs@498e232
// packages/eventwebhook/src/eventwebhook.js):
//
// - body: a JSON array of events `{email, timestamp, event, sg_event_id,
//   sg_message_id, "smtp-id", category[], ...custom_args}`; `event` is
//   `processed`, `delivered`, `deferred`, `bounce` (`type` `bounce` for a
//   hard bounce, `blocked` for a soft one), `spamreport`, `dropped` (a
//   recipient on a suppression list, with SendGrid's `reason`: `Bounced
//   Address`, `Spam Reporting Address`, ...; no `processed` before it); `sg_message_id`
//   begins with the `X-Message-Id` the send call answered with;
// - signed with ECDSA (P-256, SHA-256): `X-Twilio-Email-Event-Webhook-Signature`
//   is the base64 DER signature of `timestamp + body`, the timestamp in
//   `X-Twilio-Email-Event-Webhook-Timestamp`; the app verifies it with the
//   public key SendGrid shows (here: the registration's `public_key`), with
//   `@sendgrid/eventwebhook`'s `verifySignature`.
//
// The secret is the private key, base64 DER (PKCS#8), so it fits a
// registration's secret; the public key is made from it (`publicKeyOf`).
import { PROVIDER_EVENT_KINDS } from '../../../contract/provider-events.js';
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { codeIn, providerEventId, statusIn, type ProviderEvent, type ProviderFormatter } from './provider-event.js';

export const SENDGRID_HEADERS = Object.freeze({
  signature: 'X-Twilio-Email-Event-Webhook-Signature',
  timestamp: 'X-Twilio-Email-Event-Webhook-Timestamp',
});

/** Keys by secret: made once per registration, not once per attempt. */
const keys = new Map<string, KeyObject>();

function privateKeyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createPrivateKey({ key: Buffer.from(secret, 'base64'), format: 'der', type: 'pkcs8' });
    if (keys.size >= 256) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The public key an app verifies with: base64 DER (SubjectPublicKeyInfo), as SendGrid's settings page shows its verification key. */
export function publicKeyOf(secret: string): string {
  return createPublicKey(privateKeyOf(secret)).export({ format: 'der', type: 'spki' }).toString('base64');
}

function eventFields(event: ProviderEvent): Record<string, unknown> {
  const permanent = event.kind === 'bounced';
  switch (event.kind) {
    case 'sent':
      return { event: 'processed' };
    case 'delivered':
      return { event: 'delivered', response: event.detail };
    case 'delayed':
      return { event: 'deferred', response: event.detail, attempt: '1' };
    case 'bounced':
    case 'soft_bounced':
      return {
        event: 'bounce',
        type: permanent ? 'bounce' : 'blocked',
        reason: event.detail,
        status: statusIn(event.detail, permanent),
        bounce_classification: permanent ? 'Invalid Address' : 'Mailbox Unavailable',
        smtp_code: codeIn(event.detail, permanent),
      };
    case 'complained':
      return { event: 'spamreport' };
    case 'dropped':
      // Not sent: SendGrid's reason ('Bounced Address', 'Spam Reporting Address', 'Unsubscribed Address', 'Invalid').
      return { event: 'dropped', reason: event.detail, status: '5.0.0' };
  }
}

export const sendgridFormat: ProviderFormatter = {
  kinds: PROVIDER_EVENT_KINDS,
  format(event) {
    const record = {
      ...event.send.metadata,
      email: event.address,
      timestamp: Math.floor(event.at / 1000),
      'smtp-id': event.send.messageId ?? '',
      category: event.send.tags,
      sg_event_id: Buffer.from(providerEventId(event.eventId), 'hex').toString('base64url'),
      sg_message_id: `${event.send.id}.mailroom.${providerEventId(event.eventId).slice(0, 8)}`,
      ...eventFields(event),
    };
    return { body: JSON.stringify([record]) };
  },
  sign(secret, _eventId, timestampSeconds, body) {
    const signature = sign('sha256', Buffer.from(`${timestampSeconds}${body}`), { key: privateKeyOf(secret), dsaEncoding: 'der' });
    return { [SENDGRID_HEADERS.signature]: signature.toString('base64'), [SENDGRID_HEADERS.timestamp]: String(timestampSeconds) };
  },
  makeSecret: () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  secretProblem(secret) {
    try {
      const key = privateKeyOf(secret);
      return key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? undefined : 'an EC P-256 private key';
    } catch {
      return 'an EC P-256 private key, base64 DER (PKCS#8), as the registration of a sendgrid webhook returns it';
    }
  },
};
