// Amazon SES v2: `SendEmail` (`POST /v2/email/outbound-emails`), as
// `@aws-sdk/client-sesv2` (and nodemailer 7+'s SES transport, which sends
// `Content.Raw` through it) sends it when `AWS_ENDPOINT_URL_SESV2` (or the
// client's `endpoint`) points at this server.
//
// Wire facts (shared/research/provider-apis.md §1a; aws-sdk-js-v3
// Aws_restJson1 se_SendEmailCommand; @smithy/core loadRestJsonErrorCode):
// - auth: a SigV4 `Authorization: AWS4-HMAC-SHA256 Credential=…,
//   SignedHeaders=…, Signature=…`; the signature is not checked (any key is
//   taken), its shape is;
// - body `FromEmailAddress`, `Destination{ToAddresses, CcAddresses,
//   BccAddresses}`, `ReplyToAddresses`, `EmailTags[{Name, Value}]`, and one of
//   `Content.Simple{Subject, Body{Text, Html}, Headers, Attachments}`,
//   `Content.Raw{Data}` (base64 MIME; its recipients are `Destination`'s when
//   given, else its own headers'), `Content.Template{TemplateContent |
//   TemplateName | TemplateArn, TemplateData, Headers, Attachments}`;
// - success `200 {"MessageId": "…"}`;
// - errors: the status, the error's name in `x-amzn-errortype` (what the SDK
//   makes its exception class from: `MessageRejected`, `BadRequestException`,
//   `TooManyRequestsException`, ...) and `{"message": "…"}`. The SDK retries
//   429 and 5xx by itself (3 attempts in all, honouring `Retry-After`).
import { randomUUID } from 'node:crypto';
import type { ProviderStamp } from '../../../contract/providers.js';
import { fail, type ApiAttachment, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { headerRecipients, SES_MAX_RECIPIENTS as MAX_RECIPIENTS, sesMessageId, sigV4Problem } from './aws-ses.js';
import { address, addressesAt, base64At, objectAt, optionalString } from './fields.js';
import { renderTemplate } from './templates.js';
import { jsonBody, retryAfterSeconds, type ParsedCall, type ProviderOperation } from './provider-operation.js';

function error(status: number, type: string, message: string, headers: Record<string, string> = {}): Reply {
  return json(status, { message }, { 'x-amzn-errortype': type, 'x-amzn-requestid': randomUUID(), ...headers });
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return failure.detail.startsWith('Missing')
        ? error(403, 'MissingAuthenticationTokenException', failure.detail)
        : error(403, 'IncompleteSignatureException', failure.detail);
    case 'invalid':
    case 'too_many_recipients':
    case 'unsupported':
      return error(400, 'BadRequestException', failure.detail);
    case 'too_large':
      return error(413, 'RequestEntityTooLargeException', failure.detail);
    case 'domain':
    case 'rejected':
      return error(400, 'MessageRejected', failure.detail);
    case 'rate_limited': {
      const after = retryAfterSeconds(failure.retryAfterMs);
      return error(429, 'TooManyRequestsException', failure.detail, after === undefined ? {} : { 'retry-after': after });
    }
    case 'unavailable':
      return error(failure.status, failure.status === 500 ? 'InternalServiceErrorException' : 'ServiceUnavailable', failure.detail);
  }
}

/** `{Data, Charset}`'s data: SES wraps every text in one. */
function dataOf(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  return optionalString(objectAt(value, field), 'Data', `${field}.Data`);
}

function attachmentsOf(value: unknown, field: string): ApiAttachment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail({ kind: 'invalid', field, detail: `${field} must be a list` });
  return value.map((entry, i) => {
    const a = objectAt(entry, `${field}[${i}]`);
    const contentId = optionalString(a, 'ContentId', `${field}[${i}].ContentId`);
    const disposition = optionalString(a, 'ContentDisposition', `${field}[${i}].ContentDisposition`);
    return {
      content: base64At(a.RawContent, `${field}[${i}].RawContent`),
      filename: optionalString(a, 'FileName', `${field}[${i}].FileName`),
      contentType: optionalString(a, 'ContentType', `${field}[${i}].ContentType`),
      contentId,
      inline: disposition === 'INLINE' || (disposition === undefined && contentId !== undefined),
    };
  });
}

function headersOf(value: unknown, field: string): [string, string][] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail({ kind: 'invalid', field, detail: `${field} must be a list` });
  return value.map((entry, i) => {
    const h = objectAt(entry, `${field}[${i}]`);
    const name = optionalString(h, 'Name', `${field}[${i}].Name`);
    const headerValue = optionalString(h, 'Value', `${field}[${i}].Value`);
    if (name === undefined || headerValue === undefined) fail({ kind: 'invalid', field, detail: `${field}[${i}] needs a Name and a Value` });
    return [name, headerValue];
  });
}

async function sendOf(body: unknown): Promise<ApiSend> {
  const o = objectAt(body, 'body');
  const content = objectAt(o.Content ?? fail({ kind: 'invalid', field: 'Content', detail: 'Missing required parameter Content' }), 'Content');
  const tags = o.EmailTags === undefined || o.EmailTags === null ? [] : o.EmailTags;
  if (!Array.isArray(tags)) fail({ kind: 'invalid', field: 'EmailTags', detail: 'EmailTags must be a list' });
  const metadata = Object.fromEntries(
    (tags as unknown[]).map((tag, i) => {
      const t = objectAt(tag, `EmailTags[${i}]`);
      const name = optionalString(t, 'Name', `EmailTags[${i}].Name`);
      const value = optionalString(t, 'Value', `EmailTags[${i}].Value`);
      if (name === undefined || value === undefined) fail({ kind: 'invalid', field: 'EmailTags', detail: `EmailTags[${i}] needs a Name and a Value` });
      return [name, value];
    }),
  );
  const stamp: ProviderStamp = { name: 'ses', id: sesMessageId(), tags: [], metadata };
  const destination = o.Destination === undefined || o.Destination === null ? undefined : objectAt(o.Destination, 'Destination');
  const to = addressesAt(destination?.ToAddresses, 'Destination.ToAddresses');
  const cc = addressesAt(destination?.CcAddresses, 'Destination.CcAddresses');
  const bcc = addressesAt(destination?.BccAddresses, 'Destination.BccAddresses');
  const fromText = optionalString(o, 'FromEmailAddress');

  if (content.Raw !== undefined) {
    const source = base64At(objectAt(content.Raw, 'Content.Raw').Data, 'Content.Raw.Data');
    const recipients = destination ? [...to, ...cc, ...bcc].map((a) => a.address) : await headerRecipients(source);
    if (recipients.length > MAX_RECIPIENTS) fail({ kind: 'too_many_recipients', detail: `Recipient count exceeds ${MAX_RECIPIENTS}.` });
    return { stamp, mail: { kind: 'raw', source, from: fromText === undefined ? undefined : address(fromText, 'FromEmailAddress').address, recipients } };
  }

  if (fromText === undefined) fail({ kind: 'invalid', field: 'FromEmailAddress', detail: 'Missing required parameter FromEmailAddress' });
  if (to.length + cc.length + bcc.length === 0)
    fail({ kind: 'invalid', field: 'Destination', detail: 'Missing required parameter Destination: the message has no recipient' });
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) fail({ kind: 'too_many_recipients', detail: `Recipient count exceeds ${MAX_RECIPIENTS}.` });
  const fields = { from: address(fromText, 'FromEmailAddress'), to, cc, bcc, replyTo: addressesAt(o.ReplyToAddresses, 'ReplyToAddresses') };

  if (content.Simple !== undefined) {
    const simple = objectAt(content.Simple, 'Content.Simple');
    const bodyParts = simple.Body === undefined || simple.Body === null ? {} : objectAt(simple.Body, 'Content.Simple.Body');
    const text = dataOf(bodyParts.Text, 'Content.Simple.Body.Text');
    const html = dataOf(bodyParts.Html, 'Content.Simple.Body.Html');
    const subject = dataOf(simple.Subject, 'Content.Simple.Subject');
    if (subject === undefined) fail({ kind: 'invalid', field: 'Content.Simple.Subject', detail: 'Missing required parameter Content.Simple.Subject' });
    if (text === undefined && html === undefined)
      fail({ kind: 'invalid', field: 'Content.Simple.Body', detail: 'The message has no body: give Body.Text or Body.Html' });
    return {
      stamp,
      mail: {
        kind: 'composed',
        ...fields,
        subject: subject,
        text,
        html,
        headers: headersOf(simple.Headers, 'Content.Simple.Headers'),
        attachments: attachmentsOf(simple.Attachments, 'Content.Simple.Attachments'),
      },
    };
  }

  if (content.Template !== undefined) {
    const template = objectAt(content.Template, 'Content.Template');
    if (template.TemplateContent === undefined || template.TemplateContent === null) {
      fail({
        kind: 'unsupported',
        detail: 'Templates stored at SES (TemplateName, TemplateArn) are not available on this test server: send Content.Template.TemplateContent inline',
      });
    }
    const inline = objectAt(template.TemplateContent, 'Content.Template.TemplateContent');
    const data = optionalString(template, 'TemplateData', 'Content.Template.TemplateData') ?? '{}';
    const rendered = await renderTemplate(
      { subject: optionalString(inline, 'Subject'), html: optionalString(inline, 'Html'), text: optionalString(inline, 'Text') },
      data,
      'Content.Template.TemplateData',
    );
    if (rendered.subject === undefined) fail({ kind: 'invalid', field: 'Content.Template.TemplateContent.Subject', detail: 'The template has no Subject' });
    return {
      stamp,
      mail: {
        kind: 'composed',
        ...fields,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        headers: headersOf(template.Headers, 'Content.Template.Headers'),
        attachments: attachmentsOf(template.Attachments, 'Content.Template.Attachments'),
      },
    };
  }
  return fail({ kind: 'invalid', field: 'Content', detail: 'Content must hold one of Simple, Raw or Template' });
}

export const SES_V2_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'ses',
    name: 'POST /v2/email/outbound-emails',
    matches: (path) => path === '/v2/email/outbound-emails',
    body: 'json',
    authProblem: sigV4Problem,
    parse: async (request): Promise<ParsedCall> => ({ sends: [await sendOf(jsonBody(request))], batch: 'all' }),
    answer: (results) => json(200, { MessageId: results[0]!.send!.stamp.id }, { 'x-amzn-requestid': randomUUID() }),
    refuse,
  },
];
