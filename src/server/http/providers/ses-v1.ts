// Amazon SES v1, the query protocol: `SendEmail` and `SendRawEmail` as a
// form posted to `/`, as `@aws-sdk/client-ses` (and nodemailer 6's SES
// transport, which sends `SendRawEmail` through it) sends them when
// `AWS_ENDPOINT_URL_SES` (or the client's `endpoint`) points at this server.
// `GET /` stays the web UI: only a POST to `/` is SES's (../routes.ts).
//
// Wire facts (shared/research/provider-apis.md §1b; @aws-sdk/core
// dist-cjs/submodules/protocols/index.js AwsQueryProtocol, read at
// @aws-sdk/client-ses 3.1178.0):
// - `POST /`, `application/x-www-form-urlencoded`: `Action=SendEmail|SendRawEmail`,
//   `Version=2010-12-01`, lists as `Name.member.N` (N from 1);
// - auth: a SigV4 `Authorization` header, its shape checked (aws-ses.ts);
// - `SendEmail`: `Source`, `Destination.{To,Cc,Bcc}Addresses.member.N`,
//   `ReplyToAddresses.member.N`, `Message.Subject.Data`,
//   `Message.Body.Text.Data`, `Message.Body.Html.Data`,
//   `Tags.member.N.Name`/`.Value` (the stamp's metadata); `ReturnPath`,
//   `ConfigurationSetName` and the ARNs are taken and ignored. It carries no
//   headers and no attachments: an app needing them sends `SendRawEmail`;
// - `SendRawEmail`: `RawMessage.Data` (base64 MIME), `Destinations.member.N`
//   (the envelope; without it the source's own To, Cc and Bcc, as SES does),
//   `Source` (the envelope sender), `Tags`;
// - success `200 text/xml`: `<SendEmailResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/">
//   <SendEmailResult><MessageId>…</MessageId></SendEmailResult>
//   <ResponseMetadata><RequestId>…</RequestId></ResponseMetadata></SendEmailResponse>`
//   (`SendRawEmail…` alike); the SDK reads `<Action>Result` (deserializeResponse);
// - errors `<ErrorResponse xmlns=…><Error><Type>Sender</Type><Code>…</Code>
//   <Message>…</Message></Error><RequestId>…</RequestId></ErrorResponse>`:
//   the SDK names its exception by `Error.Code` (loadQueryErrorCode):
//   `MessageRejected` and `TemplateDoesNotExist` are classes of
//   client-ses, any other code an `SESServiceException` named by the code.
//   Codes and statuses from the SES API reference's Common Errors
//   (https://docs.aws.amazon.com/ses/latest/APIReference/CommonErrors.html):
//   MissingAuthenticationToken 403, IncompleteSignature 400, MissingAction
//   and InvalidAction 400, ValidationError 400, InvalidParameterValue 400,
//   InternalFailure 500, ServiceUnavailable 503. A message over the size
//   limit is a `MessageRejected`, SES's word for one over its 10 MB, with
//   413, the status every provider here answers a body too large with.
// - a rate limit is `Throttling`, "Maximum sending rate exceeded." (AWS
//   Messaging blog, "How to handle a 'Throttling – Maximum sending rate
//   exceeded' error": the query interface answers a `Throttling` error).
//   SES sends it with status 400 (Common Errors: ThrottlingException 400),
//   and so does this server (the attempt log reads the outcome from what
//   failed, not from the status, so it is still a deferral there). The SDK
//   retries it: its retry classifier calls an error throttling when the
//   status is 429 or the code is in THROTTLING_ERROR_CODES, which holds `Throttling`
//   (@smithy/core dist-es/submodules/retry/service-error-classification/
//   constants.js, service-error-classification.js isThrottlingError), and
//   retries it (3 attempts in all by default), honouring `Retry-After`.
import { randomUUID } from 'node:crypto';
import type { ProviderStamp } from '../../../contract/providers.js';
import { fail, type ApiAddress, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import type { Reply } from '../edge/reply.js';
import { headerRecipients, SES_MAX_RECIPIENTS, sesMessageId, sigV4Problem } from './aws-ses.js';
import { address, base64At } from './fields.js';
import { retryAfterSeconds, type ParsedCall, type ProviderOperation, type ProviderRequest } from './provider-operation.js';

const NAMESPACE = 'http://ses.amazonaws.com/doc/2010-12-01/';
const ACTIONS = ['SendEmail', 'SendRawEmail'] as const;
type Action = (typeof ACTIONS)[number];
/** SES's actions that send with a template stored at SES: answered as SES answers a template it does not hold. */
const TEMPLATED_ACTIONS = ['SendTemplatedEmail', 'SendBulkTemplatedEmail'];

/** Text for an XML element's content: the five characters XML gives meaning to, escaped. */
function xmlText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]!};`);
}

function xml(status: number, body: string, requestId: string, headers: Record<string, string> = {}): Reply {
  return {
    status,
    headers: { 'content-type': 'text/xml', 'cache-control': 'no-store', 'x-amzn-requestid': requestId, ...headers },
    body: `<?xml version="1.0" encoding="UTF-8"?>\n${body}\n`,
  };
}

function error(status: number, type: 'Sender' | 'Receiver', code: string, message: string, headers: Record<string, string> = {}): Reply {
  const requestId = randomUUID();
  return xml(
    status,
    `<ErrorResponse xmlns="${NAMESPACE}"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xmlText(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
    requestId,
    headers,
  );
}

/** A required member the call left out, worded as AWS's validation words it (and answered `ValidationError`). */
const VALIDATION = /^1 validation error detected/;
function required(member: string): never {
  return fail({
    kind: 'invalid',
    field: member,
    detail: `1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`,
  });
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return failure.detail.startsWith('Missing')
        ? error(403, 'Sender', 'MissingAuthenticationToken', failure.detail)
        : error(400, 'Sender', 'IncompleteSignature', failure.detail);
    case 'invalid':
      if (failure.field === 'Action') return error(400, 'Sender', failure.detail.startsWith('Missing') ? 'MissingAction' : 'InvalidAction', failure.detail);
      return error(400, 'Sender', VALIDATION.test(failure.detail) ? 'ValidationError' : 'InvalidParameterValue', failure.detail);
    case 'too_many_recipients':
      return error(400, 'Sender', 'InvalidParameterValue', failure.detail);
    case 'unsupported':
      // The one thing SES v1 stores that a send names: a template (SendTemplatedEmail).
      return error(400, 'Sender', 'TemplateDoesNotExist', failure.detail);
    case 'too_large':
      return error(413, 'Sender', 'MessageRejected', failure.detail);
    case 'domain':
    case 'rejected':
      return error(400, 'Sender', 'MessageRejected', failure.detail);
    case 'rate_limited': {
      const after = retryAfterSeconds(failure.retryAfterMs);
      return error(400, 'Sender', 'Throttling', `Maximum sending rate exceeded. ${failure.detail}`, after === undefined ? {} : { 'retry-after': after });
    }
    case 'unavailable':
      return failure.status === 500
        ? error(500, 'Receiver', 'InternalFailure', failure.detail)
        : error(failure.status, 'Receiver', 'ServiceUnavailable', failure.detail);
  }
}

/** The form's fields by name (the query protocol sends each once; the last one sent counts). */
type Form = ReadonlyMap<string, string>;

/** `Name.member.1`, `Name.member.2`, ...: a list's values in the order of their numbers. */
function members(form: Form, list: string): string[] {
  const prefix = `${list}.member.`;
  const numbered: [number, string][] = [];
  for (const [key, value] of form) {
    if (!key.startsWith(prefix)) continue;
    const rest = key.slice(prefix.length);
    if (/^[1-9]\d*$/.test(rest)) numbered.push([Number(rest), value]);
  }
  return numbered.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
}

function addressesOf(form: Form, list: string): ApiAddress[] {
  return members(form, list).map((text, i) => address(text, `${list}.member.${i + 1}`));
}

/** `Tags.member.N.Name` / `.Value` as the stamp's metadata. */
function tagsOf(form: Form): Record<string, string> {
  const names = new Set<string>();
  for (const key of form.keys()) {
    const match = /^Tags\.member\.([1-9]\d*)\.(?:Name|Value)$/.exec(key);
    if (match) names.add(match[1]!);
  }
  return Object.fromEntries(
    [...names].map((n) => {
      const name = form.get(`Tags.member.${n}.Name`);
      const value = form.get(`Tags.member.${n}.Value`);
      if (name === undefined || value === undefined) required(`Tags.member.${n}.${name === undefined ? 'Name' : 'Value'}`);
      return [name, value];
    }),
  );
}

function tooMany(count: number): void {
  if (count > SES_MAX_RECIPIENTS) fail({ kind: 'too_many_recipients', detail: `Recipient count exceeds ${SES_MAX_RECIPIENTS}.` });
}

function sendEmail(form: Form, stamp: ProviderStamp): ApiSend {
  const source = form.get('Source') ?? required('Source');
  const to = addressesOf(form, 'Destination.ToAddresses');
  const cc = addressesOf(form, 'Destination.CcAddresses');
  const bcc = addressesOf(form, 'Destination.BccAddresses');
  if (to.length + cc.length + bcc.length === 0) {
    fail({
      kind: 'invalid',
      field: 'Destination',
      detail: 'The message has no recipient: give Destination.ToAddresses, Destination.CcAddresses or Destination.BccAddresses',
    });
  }
  tooMany(to.length + cc.length + bcc.length);
  const subject = form.get('Message.Subject.Data') ?? required('Message.Subject.Data');
  const text = form.get('Message.Body.Text.Data');
  const html = form.get('Message.Body.Html.Data');
  if (text === undefined && html === undefined) required('Message.Body');
  return {
    stamp,
    mail: {
      kind: 'composed',
      from: address(source, 'Source'),
      to,
      cc,
      bcc,
      replyTo: addressesOf(form, 'ReplyToAddresses'),
      subject,
      text,
      html,
      headers: [],
      attachments: [],
    },
  };
}

async function sendRawEmail(form: Form, stamp: ProviderStamp): Promise<ApiSend> {
  const data = form.get('RawMessage.Data') ?? required('RawMessage.Data');
  const source = base64At(data, 'RawMessage.Data');
  const destinations = members(form, 'Destinations');
  const recipients =
    destinations.length > 0 ? destinations.map((text, i) => address(text, `Destinations.member.${i + 1}`).address) : await headerRecipients(source);
  tooMany(recipients.length);
  const from = form.get('Source');
  return { stamp, mail: { kind: 'raw', source, from: from === undefined ? undefined : address(from, 'Source').address, recipients } };
}

/** The call's action, or the refusal SES answers a missing or unknown one with. */
function actionOf(form: Form): Action {
  const action = form.get('Action');
  if (action === undefined || action === '') {
    return fail({ kind: 'invalid', field: 'Action', detail: 'Missing Action: this endpoint takes Action=SendEmail or Action=SendRawEmail (SES v1)' });
  }
  if (TEMPLATED_ACTIONS.includes(action)) {
    fail({
      kind: 'unsupported',
      detail: `${action} sends a template stored at SES, and this test server stores none: send SendEmail, or SendRawEmail with the rendered message`,
    });
  }
  if (!(ACTIONS as readonly string[]).includes(action)) {
    fail({
      kind: 'invalid',
      field: 'Action',
      detail: `The action ${action} is not valid for this web service: this server answers SendEmail and SendRawEmail`,
    });
  }
  return action as Action;
}

const formOf = (request: ProviderRequest): Form => new Map(request.body.kind === 'form' ? request.body.fields : []);

export const SES_V1_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'ses',
    name: 'POST / (SES v1 SendEmail, SendRawEmail)',
    matches: (path) => path === '/',
    body: 'form',
    authProblem: sigV4Problem,
    async parse(request): Promise<ParsedCall> {
      const form = formOf(request);
      const action = actionOf(form);
      const stamp: ProviderStamp = { name: 'ses', id: sesMessageId(), tags: [], metadata: tagsOf(form) };
      return { sends: [action === 'SendEmail' ? sendEmail(form, stamp) : await sendRawEmail(form, stamp)], batch: 'all' };
    },
    answer(results, request) {
      const action = formOf(request).get('Action')!;
      const requestId = randomUUID();
      return xml(
        200,
        `<${action}Response xmlns="${NAMESPACE}"><${action}Result><MessageId>${xmlText(results[0]!.send!.stamp.id)}</MessageId></${action}Result><ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`,
        requestId,
      );
    },
    refuse,
  },
];
