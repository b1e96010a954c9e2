// Resend's delivery events, as Resend posts them to an app's webhook
// (shared/research/provider-apis.md §4; resend-node@3f67459
// src/webhooks/interfaces/webhook-event.interface.ts, resend 6.38.0's
// `WebhookEventPayload`; resend.com/docs/webhooks/event-types):
//
// - body `{"type": "email.delivered", "created_at", "data": {email_id,
//   message_id, created_at, from, to[], subject, tags{}, bounce?{message,
//   type, subType}}}`; `email_id` is the `id` the send call answered with;
// - types: `email.sent`, `email.delivered`, `email.delivery_delayed`,
//   `email.bounced` (`bounce.type` `Permanent` or `Transient`),
//   `email.complained`, `email.suppressed` (`suppressed{message, type}`: a
//   recipient on the suppression list, not sent);
// - signed through Svix, the Standard Webhooks scheme: headers `svix-id`
//   (the event's id: deduplicate on it), `svix-timestamp` (Unix seconds, of
//   this attempt), `svix-signature` `v1,<base64 HMAC-SHA256 of
//   "id.timestamp.body">` keyed with the base64 part of the `whsec_` secret
//   (docs.svix.com/receiving/verifying-payloads/how-manual). Resend's
//   `resend.webhooks.verify` wraps `standardwebhooks`, which checks exactly this.
import { createHmac, randomBytes } from 'node:crypto';
import { PROVIDER_EVENT_KINDS } from '../../../contract/provider-events.js';
import { providerEventId, type ProviderEvent, type ProviderFormatter } from './provider-event.js';

const TYPES = {
  sent: 'email.sent',
  delivered: 'email.delivered',
  delayed: 'email.delivery_delayed',
  bounced: 'email.bounced',
  soft_bounced: 'email.bounced',
  complained: 'email.complained',
  dropped: 'email.suppressed',
} as const;

function bounceOf(event: ProviderEvent): { message: string; type: string; subType: string } | undefined {
  if (event.kind === 'bounced') return { message: event.detail, type: 'Permanent', subType: 'General' };
  if (event.kind === 'soft_bounced') return { message: event.detail, type: 'Transient', subType: 'MailboxFull' };
  return undefined;
}

/** `svix-id`: `msg_` and the event's hex digits. */
export const svixId = (eventId: string): string => `msg_${providerEventId(eventId)}`;

export const resendFormat: ProviderFormatter = {
  kinds: PROVIDER_EVENT_KINDS,
  format(event) {
    const bounce = bounceOf(event);
    const data = {
      email_id: event.send.id,
      message_id: event.send.messageId ?? '',
      created_at: new Date(event.sentAt).toISOString(),
      from: event.from,
      to: [event.address],
      subject: event.send.subject ?? '',
      tags: event.send.metadata,
      ...(bounce ? { bounce } : {}),
    };
    // `email.suppressed`'s `suppressed.type`: resend 6.38.0 types it as a string and Resend's docs list no values; SES's word (Resend sends through SES) is used.
    const suppressed = event.kind === 'dropped' ? { suppressed: { message: event.detail, type: 'OnAccountSuppressionList' } } : {};
    return { body: JSON.stringify({ type: TYPES[event.kind], created_at: new Date(event.at).toISOString(), data: { ...data, ...suppressed } }) };
  },
  sign(secret, eventId, timestampSeconds, body) {
    const id = svixId(eventId);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64');
    return { 'svix-id': id, 'svix-timestamp': String(timestampSeconds), 'svix-signature': `v1,${signature}` };
  },
  makeSecret: () => `whsec_${randomBytes(24).toString('base64')}`,
  secretProblem: (secret) =>
    /^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(secret) && secret.length <= 256 ? undefined : 'a Svix signing secret: whsec_ and base64, as Resend shows one',
};
