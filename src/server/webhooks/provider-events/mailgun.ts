// Mailgun's webhooks, as Mailgun posts them (shared/research/provider-apis.md
// §4; documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks
// and .../events):
//
// - body `{"signature": {timestamp, token, signature}, "event-data": {id,
//   timestamp, event, severity?, reason?, recipient, message: {headers:
//   {"message-id"}}, tags[], "user-variables"{}, "delivery-status"{}}}`;
//   `event` is `accepted`, `delivered`, `failed` (`severity` `permanent` for
//   a bounce, `temporary` for a delay or a soft bounce; `reason`
//   `suppress-bounce`, `suppress-complaint` or `suppress-unsubscribe`, delivery-status code 605,
//   for a recipient on a suppression list: `dropped`), `complained`;
//   `message-id` is the `id` the send call answered with, without its `<>`;
// - the signature is in the body: hex HMAC-SHA256 of `timestamp + token`
//   keyed with the webhook signing key, which the app recomputes and
//   compares (mailgun.js has no verifier: the docs give this algorithm).
//   It does not cover `event-data`: a body changed there still verifies,
//   as at Mailgun. The token is new for every event, so an app can refuse
//   one it has seen.
import { createHmac, randomBytes } from 'node:crypto';
import { PROVIDER_EVENT_KINDS } from '../../../contract/provider-events.js';
import { printableSecretProblem } from '../../../contract/webhooks.js';
import {
  bare,
  codeIn,
  DEFAULT_DETAIL,
  domainOf,
  DROPPED_AFTER_COMPLAINT,
  providerEventId,
  type ProviderEvent,
  type ProviderFormatter,
} from './provider-event.js';

/** Mailgun's suppression lists, by the `dropped` event's detail (SendGrid's words for the same lists). */
const SUPPRESSIONS: Readonly<Record<string, { readonly reason: string; readonly description: string }>> = {
  [DEFAULT_DETAIL.dropped]: { reason: 'suppress-bounce', description: 'Not delivering to previously bounced address' },
  [DROPPED_AFTER_COMPLAINT]: { reason: 'suppress-complaint', description: 'Not delivering to a user who marked your messages as spam' },
  'Unsubscribed Address': { reason: 'suppress-unsubscribe', description: 'Not delivering to unsubscribed address' },
};

function eventFields(event: ProviderEvent): Record<string, unknown> {
  const status = (code: number, description: string) => ({ code, message: event.detail, description, 'attempt-no': 1 });
  switch (event.kind) {
    case 'sent':
      return { event: 'accepted', 'log-level': 'info' };
    case 'delivered':
      return { event: 'delivered', 'log-level': 'info', 'delivery-status': status(250, '') };
    case 'delayed':
    case 'soft_bounced':
      return {
        event: 'failed',
        severity: 'temporary',
        reason: 'generic',
        'log-level': 'warn',
        'delivery-status': status(codeIn(event.detail, false), event.detail),
      };
    case 'bounced':
      return {
        event: 'failed',
        severity: 'permanent',
        reason: 'bounce',
        'log-level': 'error',
        'delivery-status': status(codeIn(event.detail, true), event.detail),
      };
    case 'complained':
      return { event: 'complained', 'log-level': 'warn' };
    case 'dropped': {
      // Mailgun's suppressions: not sent, failed at once, the list the recipient is on as the reason.
      const list = SUPPRESSIONS[event.detail] ?? SUPPRESSIONS[DEFAULT_DETAIL.dropped]!;
      return {
        event: 'failed',
        severity: 'permanent',
        reason: list.reason,
        'log-level': 'error',
        'delivery-status': { code: 605, message: '', description: list.description, 'attempt-no': 1 },
      };
    }
  }
}

/** Mailgun's body signature: hex HMAC-SHA256 of `timestamp + token`. */
export function mailgunSignature(signingKey: string, timestamp: string, token: string): string {
  return createHmac('sha256', signingKey).update(timestamp).update(token).digest('hex');
}

export const mailgunFormat: ProviderFormatter = {
  kinds: PROVIDER_EVENT_KINDS,
  format(event, webhook) {
    const timestamp = String(Math.floor(event.at / 1000));
    const token = randomBytes(25).toString('hex');
    const eventData = {
      id: Buffer.from(providerEventId(event.eventId), 'hex').toString('base64url'),
      timestamp: event.at / 1000,
      recipient: event.address,
      'recipient-domain': domainOf(event.address),
      envelope: { sender: event.from, targets: event.address, transport: 'smtp' },
      message: { headers: { 'message-id': bare(event.send.id), from: event.from, to: event.address, subject: event.send.subject ?? '' } },
      tags: event.send.tags,
      'user-variables': event.send.metadata,
      flags: { 'is-test-mode': false },
      ...eventFields(event),
    };
    const signature = { timestamp, token, signature: mailgunSignature(webhook.secret, timestamp, token) };
    return { body: JSON.stringify({ signature, 'event-data': eventData }) };
  },
  makeSecret: () => randomBytes(16).toString('hex'),
  secretProblem: printableSecretProblem,
};
