// SES's delivery notifications, as an app receives them through an SNS
// HTTP(S) subscription (shared/research/provider-apis.md §4;
// docs.aws.amazon.com/ses/latest/dg/notification-contents.html and
// notification-examples.html; docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
// and sns-message-and-json-formats.html):
//
// - first a `SubscriptionConfirmation` (the app confirms by fetching its
//   `SubscribeURL`), then one `Notification` per event: the SNS envelope
//   `{Type, MessageId, TopicArn, Message, Timestamp, SignatureVersion,
//   Signature, SigningCertURL, UnsubscribeURL}` with the SES notification as
//   a JSON string in `Message`: `notificationType` `Delivery`, `Bounce`
//   (`bounceType` `Permanent` or `Transient`; `Permanent`
//   `OnAccountSuppressionList` for a recipient SES would not send to) or `Complaint`, and `mail`
//   whose `messageId` is the `MessageId` the send call answered with. SES
//   notifications have no `sent` or delay (those are configuration-set
//   event publishing): none is sent for them.
// - signed as SNS signs (SignatureVersion 1, SHA1withRSA) over the
//   envelope's fields, each name and value on its own line, in the documented
//   order; the certificate is this server's, made once per process and served
//   at `SigningCertURL`. The body is signed once, when it is made: SNS
//   resends the same signed message on a retry.
//
// A stock SNS verifier (`sns-validator`) refuses a certificate that is not
// at an https `sns.<region>.amazonaws.com` URL, as it must: an app under
// test verifies against the certificate at `SigningCertURL` on this
// server (docs/providers.md, "SES").
import { createSign } from 'node:crypto';
import { PROVIDER_EVENTS_PATH } from '../../../contract/routes.js';
import { makeSelfSigned, oncePerProcess, type PemCertificate } from '../../base/self-signed.js';
import {
  bare,
  codeIn,
  statusIn,
  uuidOf,
  type FormatContext,
  type FormattedEvent,
  type FormatWebhook,
  type ProviderEvent,
  type ProviderFormatter,
} from './provider-event.js';

export const SES_TOPIC_ARN = 'arn:aws:sns:us-east-1:000000000000:mailroom-ses-events';
export const SNS_CERTIFICATE_PATH = `${PROVIDER_EVENTS_PATH}/ses/certificate.pem`;
export const SNS_CONFIRM_PATH = `${PROVIDER_EVENTS_PATH}/ses/confirm`;

/** The certificate once made: an event is signed where it is made, synchronously. */
let made: PemCertificate | undefined;

/** The certificate SNS messages are signed with: self-signed, made at the first `ses` registration, one per process (as SNS has one per region). */
export const snsCertificate: () => Promise<PemCertificate> = oncePerProcess(async () => {
  made = await makeSelfSigned('sns.mailroom.test');
  return made;
});

/** The fields SNS signs, in its order, for each message type. */
const SIGNED_FIELDS = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
} as const;

/** SNS's string to sign: `name\nvalue\n` for each signed field present. */
export function snsStringToSign(message: Readonly<Record<string, string | undefined>>): string {
  const fields = SIGNED_FIELDS[message.Type as keyof typeof SIGNED_FIELDS] ?? SIGNED_FIELDS.Notification;
  return fields.map((name) => (message[name] === undefined ? '' : `${name}\n${message[name]}\n`)).join('');
}

/** The certificate, made already (a `ses` registration waits for it: `snsCertificate`). */
export function madeSnsCertificate(): PemCertificate {
  if (!made) throw new Error('the SNS signing certificate is not made yet: a ses webhook is registered first');
  return made;
}

function signed(envelope: Record<string, string>, context: FormatContext): Record<string, string> {
  const { key } = madeSnsCertificate();
  const unsigned = { ...envelope, SignatureVersion: '1', SigningCertURL: `${context.apiUrl}${SNS_CERTIFICATE_PATH}` };
  const signature = createSign('RSA-SHA1').update(snsStringToSign(unsigned)).sign(key, 'base64');
  return { ...unsigned, Signature: signature };
}

function headersOf(type: string, messageId: string, webhook: FormatWebhook): Record<string, string> {
  return {
    'content-type': 'text/plain; charset=UTF-8',
    'x-amz-sns-message-type': type,
    'x-amz-sns-message-id': messageId,
    'x-amz-sns-topic-arn': SES_TOPIC_ARN,
    ...(type === 'Notification' ? { 'x-amz-sns-subscription-arn': `${SES_TOPIC_ARN}:${webhook.id}` } : {}),
  };
}

function notificationOf(event: ProviderEvent): Record<string, unknown> {
  const timestamp = new Date(event.at).toISOString();
  const mail = {
    timestamp: new Date(event.sentAt).toISOString(),
    source: event.from,
    sourceArn: 'arn:aws:ses:us-east-1:000000000000:identity/mailroom.test',
    sendingAccountId: '000000000000',
    messageId: bare(event.send.id),
    destination: [event.address],
    headersTruncated: false,
    commonHeaders: { from: [event.from], to: [event.address], messageId: event.send.messageId ?? '', subject: event.send.subject ?? '' },
    tags: Object.fromEntries(Object.entries(event.send.metadata).map(([name, value]) => [name, [value]])),
  };
  const feedbackId = `${uuidOf(event.eventId)}-000000`;
  switch (event.kind) {
    case 'delivered':
      return {
        notificationType: 'Delivery',
        mail,
        delivery: {
          timestamp,
          processingTimeMillis: Math.max(0, event.at - event.sentAt),
          recipients: [event.address],
          smtpResponse: event.detail,
          reportingMTA: 'mailroom.test',
        },
      };
    case 'bounced':
    case 'soft_bounced':
    case 'dropped': {
      const permanent = event.kind !== 'soft_bounced';
      const recipient = {
        emailAddress: event.address,
        action: 'failed',
        status: statusIn(event.detail, permanent),
        diagnosticCode:
          event.kind === 'dropped'
            ? 'Amazon SES did not send the message to this address because it is on the suppression list for your account.'
            : `smtp; ${codeIn(event.detail, permanent)} ${event.detail}`,
      };
      return {
        notificationType: 'Bounce',
        mail,
        bounce: {
          bounceType: permanent ? 'Permanent' : 'Transient',
          // A recipient on the account's suppression list is not sent to: SES reports it so.
          bounceSubType: event.kind === 'dropped' ? 'OnAccountSuppressionList' : permanent ? 'General' : 'MailboxFull',
          bouncedRecipients: [recipient],
          timestamp,
          feedbackId,
          reportingMTA: 'dsn; mailroom.test',
        },
      };
    }
    case 'complained':
      return {
        notificationType: 'Complaint',
        mail,
        complaint: { complainedRecipients: [{ emailAddress: event.address }], timestamp, feedbackId, complaintFeedbackType: 'abuse', arrivalDate: timestamp },
      };
    default:
      throw new Error(`SES notifications have no ${event.kind} event`);
  }
}

export const sesFormat: ProviderFormatter = {
  kinds: ['delivered', 'bounced', 'soft_bounced', 'complained', 'dropped'],
  format(event, webhook, context) {
    const notification = notificationOf(event);
    const messageId = uuidOf(event.eventId);
    const envelope = signed(
      {
        Type: 'Notification',
        MessageId: messageId,
        TopicArn: SES_TOPIC_ARN,
        Message: JSON.stringify(notification),
        Timestamp: new Date(event.at).toISOString(),
        UnsubscribeURL: `${context.apiUrl}${SNS_CONFIRM_PATH}?Action=Unsubscribe&SubscriptionArn=${encodeURIComponent(`${SES_TOPIC_ARN}:${webhook.id}`)}`,
      },
      context,
    );
    return { body: JSON.stringify(envelope), headers: headersOf('Notification', messageId, webhook) };
  },
  // Nothing of the registration signs: the server's certificate does (snsCertificate).
  makeSecret: () => '',
  secretProblem: () => "nothing: SNS signs with this server's certificate (SigningCertURL); leave `secret` out",
};

/** The `SubscriptionConfirmation` a `ses` webhook is sent first; the app fetches `SubscribeURL` to confirm. */
export function subscriptionConfirmation(webhook: FormatWebhook, eventId: string, at: number, context: FormatContext): FormattedEvent {
  const messageId = uuidOf(eventId);
  const token = `${webhook.id}.${messageId}`;
  const envelope = signed(
    {
      Type: 'SubscriptionConfirmation',
      MessageId: messageId,
      Token: token,
      TopicArn: SES_TOPIC_ARN,
      Message: `You have chosen to subscribe to the topic ${SES_TOPIC_ARN}.\nTo confirm the subscription, visit the SubscribeURL included in this message.`,
      SubscribeURL: `${context.apiUrl}${SNS_CONFIRM_PATH}?Action=ConfirmSubscription&TopicArn=${encodeURIComponent(SES_TOPIC_ARN)}&Token=${encodeURIComponent(token)}`,
      Timestamp: new Date(at).toISOString(),
    },
    context,
  );
  return { body: JSON.stringify(envelope), headers: headersOf('SubscriptionConfirmation', messageId, webhook) };
}
