// The provider events' HTTP calls (docs/CONTRACT.md, "Provider events"):
// a test's report for its address (`POST /api/v1/provider-events`, "this
// address bounced"), and SNS's two links in SES's events - the signing
// certificate (`SigningCertURL`) and the subscription confirmation
// (`SubscribeURL`). Those two are fetched by the app under test, as it
// fetches them from AWS, so they need no token (bearer-token.ts).
import type { IncomingMessage } from 'node:http';
import { REPORTABLE_PROVIDER_EVENTS, type ReportedProviderEvent, type WireProviderEventReported } from '../../../contract/provider-events.js';
import { Refusal } from '../../../contract/refusal.js';
import { describeValue } from '../../../contract/validation.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import { SES_TOPIC_ARN, snsCertificate } from '../../webhooks/provider-events/ses.js';
import type { WebhookService } from '../../webhooks/webhook-service.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import type { Reply } from '../edge/reply.js';

const EXAMPLE = '{"address": "ann@mailroom.test", "event": "bounced"}';

/** `POST /api/v1/provider-events`: the event, about the last provider send to the address; 404 when none was sent there. */
export async function answerProviderEventReport(req: IncomingMessage, webhooks: WebhookService, reader: MailboxReader): Promise<WireProviderEventReported> {
  const raw = await readBodyUpTo(req, BODY_LIMITS.webhook);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `A report's body is at most ${BODY_LIMITS.webhook} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    body = undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new Refusal(400, 'invalid_request', `The body must be a JSON report, like ${EXAMPLE}`);
  const { address, event, detail, ...rest } = body as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new Refusal(400, 'invalid_request', `Unknown field \`${unknown}\`; expected address, event, detail`);
  if (typeof address !== 'string') throw new Refusal(400, 'invalid_request', `Expected \`address\` to be an email address, got ${describeValue(address)}`);
  if (!REPORTABLE_PROVIDER_EVENTS.includes(event as ReportedProviderEvent)) {
    throw new Refusal(400, 'invalid_request', `Expected \`event\` to be one of ${REPORTABLE_PROVIDER_EVENTS.join(', ')}, got ${describeValue(event)}`);
  }
  if (detail !== undefined && (typeof detail !== 'string' || detail.length === 0 || detail.length > 1000)) {
    throw new Refusal(400, 'invalid_request', `Expected \`detail\` to be 1 to 1000 characters, got ${describeValue(detail)}`);
  }
  const key = reader.mailboxKey(address, 'address');
  const reported = await webhooks.reportProviderEvent(key, event as ReportedProviderEvent, detail);
  if (!reported) {
    throw new Refusal(
      404,
      'not_found',
      `No provider send to ${key} is remembered (the last 10,000 addresses' are): a provider event is about a mail sent through a provider API here (POST /emails, /v3/mail/send, ...)`,
    );
  }
  return {
    address: key,
    event: event as ReportedProviderEvent,
    provider: reported.provider,
    provider_message_id: reported.providerMessageId,
    webhooks: reported.webhooks,
  };
}

export type SnsCall = 'certificate' | 'confirm';

/** An answer in SNS's XML. */
function snsXml(status: number, xml: string): Reply {
  return { status, headers: { 'content-type': 'text/xml', 'cache-control': 'no-store' }, body: xml };
}

/** SNS's answer to a call it cannot take (a token it does not know: `NotFound`). */
function snsError(status: number, code: string, message: string): Reply {
  return snsXml(
    status,
    `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>mailroom</RequestId></ErrorResponse>`,
  );
}

/**
 * SNS's links: the certificate as PEM, and the confirmation (or
 * unsubscribe) answered as SNS answers it, in XML. A confirmation releases
 * the webhook's held notifications (webhooks/subscription.ts); its token
 * names the webhook (`wh_….<message id>`, ses.ts).
 */
export async function answerSns(call: SnsCall, params: URLSearchParams, webhooks: WebhookService): Promise<Reply> {
  if (call === 'certificate') {
    const { cert } = await snsCertificate();
    return { status: 200, headers: { 'content-type': 'application/x-x509-ca-cert', 'cache-control': 'no-store' }, body: cert };
  }
  const action = params.get('Action') ?? 'ConfirmSubscription';
  if (action === 'Unsubscribe') {
    return snsXml(
      200,
      '<UnsubscribeResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ResponseMetadata><RequestId>mailroom</RequestId></ResponseMetadata></UnsubscribeResponse>',
    );
  }
  const webhookId = (params.get('Token') ?? '').split('.')[0] ?? '';
  const confirmed = /^wh_[0-9a-f]+$/.test(webhookId) ? await webhooks.confirmSubscription(webhookId) : undefined;
  if (!confirmed) return snsError(404, 'NotFound', 'No ses webhook has this subscription token (it was removed, or the token is not one this server sent)');
  const arn = `${SES_TOPIC_ARN}:${confirmed.id}`;
  return snsXml(
    200,
    `<ConfirmSubscriptionResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ConfirmSubscriptionResult><SubscriptionArn>${arn}</SubscriptionArn></ConfirmSubscriptionResult><ResponseMetadata><RequestId>mailroom</RequestId></ResponseMetadata></ConfirmSubscriptionResponse>`,
  );
}
