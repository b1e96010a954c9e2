// Postmark: `POST /email`, `POST /email/batch`, and the template sends
// `/email/withTemplate` and `/email/batchWithTemplates`, as the `postmark`
// SDK (5.x) sends them when pointed at this server with
// `new ServerClient(token, { useHttps: false, requestHost: '127.0.0.1:PORT' })`
// (no environment variable reads it).
//
// Wire facts (shared/research/provider-apis.md §1e, §2; postmark.js@5642c72
// src/client/ServerClient.ts:108-143, models/message/Message.ts,
// SupportingTypes.ts; postmarkapp.com/developer/api/overview and
// /developer/api/email-api; the same in node_modules/postmark 5.1.0):
// - auth `X-Postmark-Server-Token: <token>`; any token is taken, the test
//   token `POSTMARK_API_TEST` too (and its mail is kept: an app that uses it
//   outside production is the app that wants its mail caught here). None, or
//   blank: 401 with ErrorCode 10;
// - body `From`, `To`/`Cc`/`Bcc` (comma-separated strings, at most 50
//   together), `Subject`, `HtmlBody`, `TextBody`, `ReplyTo`,
//   `Headers[{Name, Value}]`, `Attachments[{Name, Content (base64),
//   ContentType, ContentID (`cid:x` or `x`), Disposition}]`, `Tag` (the
//   stamp's tags), `Metadata{}` (its metadata); `MessageStream`,
//   `TrackOpens`, `TrackLinks` are taken and ignored. A batch is an array of
//   these, at most 500;
// - success `200 {To, SubmittedAt, MessageID (a uuid), ErrorCode: 0,
//   Message: "OK"}`; a batch answers `200` with one of these per message,
//   in order, and `{ErrorCode, Message}` for each message it refused, the
//   others taken (batch rule `each`);
// - errors `{ErrorCode, Message}`: 401 (10), 422 (300 invalid email
//   request, 402 invalid JSON, 406 inactive recipient, 410 too many batch
//   messages, 1101 template not found), 413, 429 (429), 500, 503 (100,
//   maintenance). The SDK does not retry; node_modules/postmark/dist/client/
//   errors/ErrorHandler.js:36-52 picks its class by status: 401
//   InvalidAPIKeyError, 422 ApiInputError.buildSpecificError, 429
//   RateLimitExceededError, 500 InternalServerError, 503
//   ServiceUnavailablerError, any other (413) UnknownError; and
//   errors/Errors.js:117-130 by ErrorCode within 422: 406
//   InactiveRecipientsError (its `recipients` read from "Found inactive
//   addresses: a@b.test. Inactive", Errors.js:157-160, which the lab's
//   rejection says), 300 InvalidEmailRequestError, others ApiInputError.
//
// Not Postmark's, added: `Retry-After` on a 429 (Postmark documents no
// rate-limit header; an app that reads one, and `toHaveBackedOff`, see the
// wait the lab asked for). Templates live at Postmark, so a template send
// answers 1101 (the template is not found here, which is true, and the
// code an app already handles for a wrong TemplateId), and a batch of
// template sends is refused whole rather than answered 200 with every
// message failed: no message of it could be taken, and an error that the
// SDK raises is what a developer sees.
import { randomUUID } from 'node:crypto';
import type { ProviderStamp } from '../../../contract/providers.js';
import { ApiFailureError, fail, type ApiAttachment, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { address, addressList, base64At, objectAt, optionalString } from './fields.js';
import {
  headerValue,
  jsonBody,
  retryAfterSeconds,
  type ParsedCall,
  type ProviderOperation,
  type ProviderRequest,
  type SendResult,
} from './provider-operation.js';

/** Postmark's limits: recipients of one message (To, Cc and Bcc together), messages of one batch. */
const MAX_RECIPIENTS = 50;
const MAX_BATCH = 500;
/** The `field` of the refusal of a batch with too many messages (Postmark's own code for it, 410). */
const BATCH_FIELD = 'batch';
/** How request-body.ts words a body that is not JSON (Postmark's 402). */
const NOT_JSON = 'The request body is not valid JSON';

interface PostmarkError {
  readonly status: number;
  readonly code: number;
  readonly message: string;
}

function errorOf(failure: ApiFailure): PostmarkError {
  switch (failure.kind) {
    case 'auth':
      return { status: 401, code: 10, message: failure.detail };
    case 'invalid':
      if (failure.field === undefined && failure.detail.startsWith(NOT_JSON)) {
        return { status: 422, code: 402, message: `Received invalid JSON input. ${failure.detail}` };
      }
      return { status: 422, code: failure.field === BATCH_FIELD ? 410 : 300, message: failure.detail };
    case 'too_many_recipients':
    case 'domain':
      return { status: 422, code: 300, message: failure.detail };
    case 'unsupported':
      return { status: 422, code: 1101, message: failure.detail };
    case 'too_large':
      return { status: 413, code: 300, message: failure.detail };
    case 'rejected':
      return {
        status: 422,
        code: 406,
        message:
          `You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: ${failure.recipient}. ` +
          `Inactive recipients are ones that have generated a hard bounce, a spam complaint, or a manual suppression. (${failure.detail})`,
      };
    case 'rate_limited':
      return { status: 429, code: 429, message: failure.detail };
    case 'unavailable':
      // 503 is Postmark's maintenance (ErrorCode 100); a 500 carries no API error code: the server failed, not the request.
      return { status: failure.status, code: failure.status === 503 ? 100 : 0, message: failure.detail };
  }
}

function refuse(failure: ApiFailure): Reply {
  const { status, code, message } = errorOf(failure);
  const after = failure.kind === 'rate_limited' ? (retryAfterSeconds(failure.retryAfterMs) ?? '1') : undefined;
  return json(status, { ErrorCode: code, Message: message }, after === undefined ? {} : { 'retry-after': after });
}

const invalid = (field: string, detail: string): never => fail({ kind: 'invalid', field, detail });
const isAbsent = (value: unknown): boolean => value === undefined || value === null;

function attachmentsOf(value: unknown, field: string): ApiAttachment[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return invalid(field, `'${field}' must be an array.`);
  return value.map((entry, i) => {
    const at = `${field}[${i}]`;
    const a = objectAt(entry, at);
    const name = optionalString(a, 'Name', `${at}.Name`);
    if (!name) invalid(`${at}.Name`, `Attachment ${at} has no Name.`);
    if (isAbsent(a.Content)) invalid(`${at}.Content`, `Attachment ${at} has no Content.`);
    const contentId = optionalString(a, 'ContentID', `${at}.ContentID`)?.replace(/^cid:/i, '') || undefined;
    const disposition = optionalString(a, 'Disposition', `${at}.Disposition`)?.toLowerCase();
    return {
      content: base64At(a.Content, `${at}.Content`),
      filename: name,
      contentType: optionalString(a, 'ContentType', `${at}.ContentType`),
      contentId,
      inline: disposition === undefined ? contentId !== undefined : disposition === 'inline',
    };
  });
}

function headersOf(value: unknown, field: string): [string, string][] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return invalid(field, `'${field}' must be an array of {Name, Value}.`);
  return value.map((entry, i) => {
    const h = objectAt(entry, `${field}[${i}]`);
    const name = optionalString(h, 'Name', `${field}[${i}].Name`);
    const headerText = optionalString(h, 'Value', `${field}[${i}].Value`) ?? '';
    if (!name || !/^[!-9;-~]+$/.test(name)) invalid(`${field}[${i}].Name`, `${field}[${i}] needs a header Name, got ${JSON.stringify(name)}.`);
    return [name!, headerText];
  });
}

function metadataOf(value: unknown, field: string): Record<string, string> {
  if (isAbsent(value)) return {};
  return Object.fromEntries(
    Object.entries(objectAt(value, field)).map(([key, v]) => {
      if (typeof v !== 'string') invalid(`${field}.${key}`, `'${field}.${key}' must be a string.`);
      return [key, v as string];
    }),
  );
}

/** One message (`where`: '' for `/email`, `[3]` for a batch's fourth), or why it cannot be one. */
function messageOf(value: unknown, where: string): ApiSend {
  const o = objectAt(value, where || 'body');
  const field = (name: string) => (where ? `${where}.${name}` : name);
  const fromText = optionalString(o, 'From', field('From'));
  if (!fromText) invalid(field('From'), `Invalid '${field('From')}' address: the message has no sender.`);
  const list = (name: string) => addressList(optionalString(o, name, field(name)) ?? '', field(name));
  const to = list('To');
  const cc = list('Cc');
  const bcc = list('Bcc');
  if (to.length + cc.length + bcc.length === 0) invalid(field('To'), 'Zero recipients specified.');
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
    fail({
      kind: 'too_many_recipients',
      detail: `Too many recipients: a message may have at most ${MAX_RECIPIENTS} (To, Cc and Bcc together), got ${to.length + cc.length + bcc.length}.`,
    });
  }
  const html = optionalString(o, 'HtmlBody', field('HtmlBody')) || undefined;
  const text = optionalString(o, 'TextBody', field('TextBody')) || undefined;
  if (html === undefined && text === undefined) invalid(field('TextBody'), 'Provide either email TextBody or HtmlBody or both.');
  const tag = optionalString(o, 'Tag', field('Tag'));
  const stamp: ProviderStamp = { name: 'postmark', id: randomUUID(), tags: tag ? [tag] : [], metadata: metadataOf(o.Metadata, field('Metadata')) };
  return {
    stamp,
    mail: {
      kind: 'composed',
      from: address(fromText!, field('From')),
      to,
      cc,
      bcc,
      replyTo: list('ReplyTo'),
      subject: optionalString(o, 'Subject', field('Subject')) ?? '',
      text,
      html,
      headers: headersOf(o.Headers, field('Headers')),
      attachments: attachmentsOf(o.Attachments, field('Attachments')),
    },
  };
}

/** A batch's messages, each a send or the failure answered in its place. */
function batchOf(value: unknown, read: (item: unknown, where: string) => ApiSend): (ApiSend | ApiFailure)[] {
  if (!Array.isArray(value)) return invalid('body', 'The batch must be a JSON array of messages.');
  if (value.length > MAX_BATCH) invalid(BATCH_FIELD, `Too many batch messages: at most ${MAX_BATCH} a call, got ${value.length}.`);
  return value.map((item, i) => {
    try {
      return read(item, `[${i}]`);
    } catch (caught) {
      if (caught instanceof ApiFailureError) return caught.failure;
      throw caught;
    }
  });
}

/** A template send's refusal: its template is stored at Postmark. */
function templateSend(value: unknown, where: string): never {
  const o = objectAt(value, where || 'body');
  const named = isAbsent(o.TemplateAlias) ? `TemplateId ${JSON.stringify(o.TemplateId ?? null)}` : `TemplateAlias ${JSON.stringify(o.TemplateAlias)}`;
  return fail({
    kind: 'unsupported',
    field: isAbsent(o.TemplateAlias) ? 'TemplateId' : 'TemplateAlias',
    detail:
      `Templates stored at Postmark (${named}) are not available on this test server: ` +
      'send the message to /email (or /email/batch) with its Subject and HtmlBody or TextBody.',
  });
}

/** The `To` the call gave a message, as Postmark echoes it. */
const toOf = (message: unknown): string => {
  const to = (message as { To?: unknown } | null)?.To;
  return typeof to === 'string' ? to : '';
};

function accepted(result: SendResult, message: unknown): Record<string, unknown> {
  if (result.outcome.kind === 'failed') {
    const { code, message: text } = errorOf(result.outcome.failure);
    return { ErrorCode: code, Message: text };
  }
  return { To: toOf(message), SubmittedAt: new Date().toISOString(), MessageID: result.send!.stamp.id, ErrorCode: 0, Message: 'OK' };
}

function answerOne(results: readonly SendResult[], request: ProviderRequest): Reply {
  const [result] = results;
  if (result!.outcome.kind === 'failed') return refuse(result!.outcome.failure);
  return json(200, accepted(result!, jsonBody(request)));
}

const auth = {
  authProblem(headers: ProviderRequest['headers']): string | undefined {
    const token = headerValue(headers, 'x-postmark-server-token');
    if (token === undefined) {
      return headerValue(headers, 'x-postmark-account-token') === undefined
        ? 'No Server API token was supplied in the HTTP headers: add the header X-Postmark-Server-Token (any token is taken here).'
        : 'Sending needs a server token: this call carries X-Postmark-Account-Token, send X-Postmark-Server-Token instead.';
    }
    return token.trim() === '' ? 'The Server Token you provided in the X-Postmark-Server-Token request header was invalid: it is blank.' : undefined;
  },
};

const path = (expected: string) => (actual: string) => actual === expected || actual === `${expected}/`;

export const POSTMARK_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'postmark',
    name: 'POST /email',
    matches: path('/email'),
    body: 'json',
    ...auth,
    parse: (request): ParsedCall => ({ sends: [messageOf(jsonBody(request), '')], batch: 'all' }),
    answer: answerOne,
    refuse,
  },
  {
    provider: 'postmark',
    name: 'POST /email/batch',
    matches: path('/email/batch'),
    body: 'json',
    ...auth,
    parse: (request): ParsedCall => ({ sends: batchOf(jsonBody(request), messageOf), batch: 'each' }),
    answer(results, request) {
      const messages = jsonBody(request) as unknown[];
      return json(
        200,
        results.map((result, i) => accepted(result, messages[i])),
      );
    },
    refuse,
  },
  {
    provider: 'postmark',
    name: 'POST /email/withTemplate',
    matches: path('/email/withTemplate'),
    body: 'json',
    ...auth,
    parse: (request): ParsedCall => templateSend(jsonBody(request), ''),
    answer: answerOne,
    refuse,
  },
  {
    provider: 'postmark',
    name: 'POST /email/batchWithTemplates',
    matches: path('/email/batchWithTemplates'),
    body: 'json',
    ...auth,
    parse(request): ParsedCall {
      const messages = objectAt(jsonBody(request), 'body').Messages;
      if (!Array.isArray(messages) || messages.length === 0) return invalid('Messages', "'Messages' must be an array of template messages.");
      return templateSend(messages[0], '[0]');
    },
    answer: answerOne,
    refuse,
  },
];
