// Postmark's webhooks, as Postmark posts them (shared/research/provider-apis.md
// §4; postmark.js@5642c72 src/client/models/webhooks/payload/*.ts, postmark
// 5.1.0's `DeliveryWebhook`, `BounceWebhook`, `SpamComplaintWebhook`;
// postmarkapp.com/developer/webhooks/*):
//
// - one flat JSON record per event: `RecordType` `Delivery`, `Bounce`
//   (`Type` `HardBounce`, `SoftBounce`, or `Transient` for a delay, with its
//   `TypeCode`) or `SpamComplaint`; `MessageID` is the `MessageID` the send
//   call answered with. Postmark has no event for a send it took (`sent`).
// - not signed: Postmark sends the HTTP basic-auth credentials written in
//   the webhook's URL (`https://user:pass@app/hooks`), and the app checks
//   the `Authorization` header. A registration of this format keeps them as
//   its secret (`user:pass`) and posts to the URL without them.
import { bare, providerEventId, type ProviderEvent, type ProviderFormatter } from './provider-event.js';

const BOUNCES = {
  bounced: { Type: 'HardBounce', TypeCode: 1, Name: 'Hard bounce', Inactive: true },
  soft_bounced: { Type: 'SoftBounce', TypeCode: 4096, Name: 'Soft bounce/Undeliverable', Inactive: false },
  delayed: { Type: 'Transient', TypeCode: 2, Name: 'Message delayed/Undeliverable', Inactive: false },
  complained: { Type: 'SpamComplaint', TypeCode: 512, Name: 'Spam complaint', Inactive: true },
} as const;

/** A bounce's `ID`: a number, as Postmark's are, made from the event's id. */
const numericId = (eventId: string) => Number.parseInt(providerEventId(eventId).slice(0, 12), 16);

function recordOf(event: ProviderEvent): Record<string, unknown> {
  const common = { MessageID: bare(event.send.id), ServerID: 1, MessageStream: 'outbound', Tag: event.send.tags[0] ?? '', Metadata: event.send.metadata };
  const at = new Date(event.at).toISOString();
  if (event.kind === 'delivered' || event.kind === 'sent')
    return { RecordType: 'Delivery', ...common, Recipient: event.address, DeliveredAt: at, Details: event.detail };
  // Postmark refuses a send to an inactive recipient on its API: it has no `dropped` event (`kinds`).
  if (event.kind === 'dropped') throw new Error('Postmark has no dropped event');
  const bounce = BOUNCES[event.kind];
  return {
    RecordType: event.kind === 'complained' ? 'SpamComplaint' : 'Bounce',
    ID: numericId(event.eventId),
    ...bounce,
    ...common,
    Description: bounce.Name,
    Details: event.detail,
    Email: event.address,
    From: event.from,
    BouncedAt: at,
    DumpAvailable: false,
    CanActivate: true,
    Subject: event.send.subject ?? '',
    Content: '',
  };
}

export const postmarkFormat: ProviderFormatter = {
  kinds: ['delivered', 'delayed', 'bounced', 'soft_bounced', 'complained'],
  format: (event) => ({ body: JSON.stringify(recordOf(event)) }),
  sign: (secret): Readonly<Record<string, string>> => (secret === '' ? {} : { authorization: `Basic ${Buffer.from(secret).toString('base64')}` }),
  // No credentials in the URL: Postmark sends none, and neither does this.
  makeSecret: () => '',
  secretProblem: () => "the basic-auth credentials in the url (https://user:pass@host/path), as Postmark's webhook settings take them; not `secret`",
};
