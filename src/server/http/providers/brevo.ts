// Brevo: `POST /v3/smtp/email`, as `@getbrevo/brevo` (6.x) sends it when the
// client's base URL points at this server:
// `new BrevoClient({ apiKey, baseUrl: server + '/v3' })`,
// `client.transactionalEmails.sendTransacEmail({...})`.
//
// Wire facts (shared/research/provider-apis.md §1g; @getbrevo/brevo 6.0.3
// dist/cjs/api/resources/transactionalEmails/client/Client.js and
// requests/SendTransacEmailRequest.d.ts):
// - auth the `api-key` header (auth/HeaderAuthProvider.js); missing or
//   empty: `401 {"code": "unauthorized", "message": "Key not found"}`;
// - body `sender{name, email}`, `to[{email, name}]`, `cc`, `bcc`,
//   `replyTo{email, name}`, `subject`, `htmlContent`, `textContent`,
//   `attachment[{content (base64), name}]`, `headers` (object), `tags`
//   (strings: the stamp's tags), `params` (rendered into the subject and the
//   contents' `{{params.name}}` placeholders, by Handlebars, templates.ts);
//   refused as unsupported, since they need what Brevo stores or schedules:
//   `templateId`, `sender.id`, an attachment's `url`, `scheduledAt`;
// - `messageVersions[{to, cc, bcc, replyTo, subject, htmlContent,
//   textContent, params}]`: each version is its own mail, its fields over
//   the call's (everything a version needs is in the call, so it is sent,
//   not refused); at most 99 recipients a version, 2000 a call (the
//   request's documentation);
// - success `201 {"messageId": "<…@smtp-relay.mailin.fr>"}`, or with
//   versions `{"messageIds": […]}` (SendTransacEmailResponse.d.ts);
// - errors `{code, message}`: 400 `missing_parameter` / `invalid_parameter`,
//   401 `unauthorized`, 413, 429 with `x-sib-ratelimit-limit`, `-remaining`
//   and `-reset` (seconds; https://developers.brevo.com/docs/limit-headers),
//   500/503. The SDK throws `BadRequestError` for a 400 and `BrevoError`
//   with `statusCode` for any other status (Client.js __sendTransacEmail).
// - the SDK retries 408, 429 and 5xx twice by itself (maxRetries, default 2),
//   waiting `Retry-After` (seconds, or a date), else `X-RateLimit-Reset`
//   (epoch seconds), else 1 s, 2 s with jitter (core/fetcher/
//   requestWithRetries.js): it reads neither `x-sib-ratelimit-reset` nor a
//   `Retry-After: 0`, so a rate limit here carries `Retry-After` too.
import { randomInt } from 'node:crypto';
import { parseMailboxAddress } from '../../../contract/address.js';
import { fail, type ApiAddress, type ApiAttachment, type ApiFailure, type ApiSend, type ComposedMail } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { base64At, headerPairs, objectAt, optionalString } from './fields.js';
import { headerValue, jsonBody, retryAfterSeconds, type ParsedCall, type ProviderOperation, type SendResult } from './provider-operation.js';
import { renderTemplate } from './templates.js';

/** Brevo's limits: 99 recipients a message (or message version), 2000 a call. */
const MAX_RECIPIENTS = 99;
const MAX_CALL_RECIPIENTS = 2000;

function error(status: number, code: string, message: string, headers: Record<string, string> = {}): Reply {
  return json(status, { code, message }, headers);
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return error(401, 'unauthorized', `Key not found: ${failure.detail}`);
    case 'invalid':
      return error(400, /missing/i.test(failure.detail) ? 'missing_parameter' : 'invalid_parameter', failure.detail);
    case 'too_many_recipients':
    case 'unsupported':
    case 'domain':
    case 'rejected':
      return error(400, 'invalid_parameter', failure.detail);
    case 'too_large':
      return error(413, 'invalid_parameter', failure.detail);
    case 'rate_limited': {
      const after = retryAfterSeconds(failure.retryAfterMs) ?? '1';
      return error(429, 'too_many_requests', failure.detail, {
        'retry-after': after,
        'x-sib-ratelimit-limit': '10',
        'x-sib-ratelimit-remaining': '0',
        'x-sib-ratelimit-reset': after,
      });
    }
    case 'unavailable':
      return error(failure.status, failure.status === 500 ? 'internal_error' : 'service_unavailable', failure.detail);
  }
}

/** `<202601021504.12345678901@smtp-relay.mailin.fr>`: a Brevo message id. */
function messageId(): string {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 12);
  return `<${stamp}.${randomInt(10_000_000_000, 100_000_000_000)}@smtp-relay.mailin.fr>`;
}

const missing = (field: string): never => fail({ kind: 'invalid', field, detail: `${field} is missing` });

/** `{email, name}` as an address, its email checked. */
function contactOf(value: unknown, field: string): ApiAddress {
  const contact = objectAt(value, field);
  const email = optionalString(contact, 'email', `${field}.email`) ?? missing(`${field}.email`);
  if (parseMailboxAddress(email) === undefined)
    fail({ kind: 'invalid', field, detail: `${field}.email ${JSON.stringify(email)} is not a valid email address` });
  const name = optionalString(contact, 'name', `${field}.name`);
  return name ? { address: email, name } : { address: email };
}

function contactsOf(value: unknown, field: string): ApiAddress[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail({ kind: 'invalid', field, detail: `${field} must be a list of {email, name}` });
  return value.map((entry, i) => contactOf(entry, `${field}[${i}]`));
}

function attachmentsOf(value: unknown): ApiAttachment[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail({ kind: 'invalid', field: 'attachment', detail: 'attachment must be a list of {content, name}' });
  return value.map((entry, i) => {
    const field = `attachment[${i}]`;
    const a = objectAt(entry, field);
    if (a.url !== undefined && a.url !== null) {
      fail({ kind: 'unsupported', detail: `${field}.url (an attachment Brevo fetches) is not supported by this test server: send its base64 content` });
    }
    const name = optionalString(a, 'name', `${field}.name`) ?? missing(`${field}.name`);
    if (a.content === undefined || a.content === null) missing(`${field}.content`);
    return { content: base64At(a.content, `${field}.content`), filename: name, contentType: undefined, contentId: undefined, inline: false };
  });
}

function tagsOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.some((tag) => typeof tag !== 'string'))
    return fail({ kind: 'invalid', field: 'tags', detail: 'tags must be a list of strings' });
  return value as string[];
}

function refuseStored(o: Record<string, unknown>): void {
  if (o.templateId !== undefined && o.templateId !== null) {
    fail({
      kind: 'unsupported',
      detail:
        'Templates stored at Brevo (templateId) are not available on this test server: send htmlContent or textContent, with params for their {{params.name}} placeholders',
    });
  }
  if (o.scheduledAt !== undefined && o.scheduledAt !== null) {
    fail({ kind: 'unsupported', detail: 'Scheduled sending (scheduledAt) is not supported by this test server: send without it and the email arrives now' });
  }
}

/** The fields a message version may set over the call's own: undefined where it leaves the call's. */
interface Fields {
  readonly to: ApiAddress[] | undefined;
  readonly cc: ApiAddress[] | undefined;
  readonly bcc: ApiAddress[] | undefined;
  readonly replyTo: ApiAddress[] | undefined;
  readonly subject: string | undefined;
  readonly html: string | undefined;
  readonly text: string | undefined;
  readonly params: Record<string, unknown> | undefined;
}

function fieldsOf(o: Record<string, unknown>, prefix: string): Fields {
  const given = (name: string) => o[name] !== undefined && o[name] !== null;
  return {
    to: given('to') ? contactsOf(o.to, `${prefix}to`) : undefined,
    cc: given('cc') ? contactsOf(o.cc, `${prefix}cc`) : undefined,
    bcc: given('bcc') ? contactsOf(o.bcc, `${prefix}bcc`) : undefined,
    replyTo: given('replyTo') ? [contactOf(o.replyTo, `${prefix}replyTo`)] : undefined,
    subject: optionalString(o, 'subject', `${prefix}subject`),
    html: optionalString(o, 'htmlContent', `${prefix}htmlContent`),
    text: optionalString(o, 'textContent', `${prefix}textContent`),
    params: given('params') ? objectAt(o.params, `${prefix}params`) : undefined,
  };
}

/** What every mail of the call has alike. */
type Shared = Pick<ComposedMail, 'from' | 'headers' | 'attachments'> & { readonly tags: string[] };

/** One mail of the call: the call's fields, with a version's (`prefix` names it) over them. */
async function mailOf(call: Fields, version: Fields | undefined, prefix: string, shared: Shared): Promise<ApiSend> {
  const to = (version ? version.to : call.to) ?? missing(`${prefix}to`);
  if (to.length === 0) missing(`${prefix}to`);
  const cc = version?.cc ?? call.cc ?? [];
  const bcc = version?.bcc ?? call.bcc ?? [];
  const count = to.length + cc.length + bcc.length;
  if (count > MAX_RECIPIENTS)
    fail({ kind: 'too_many_recipients', detail: `${prefix}to, cc and bcc have ${count} recipients; at most ${MAX_RECIPIENTS} are allowed` });
  const subject = version?.subject ?? call.subject ?? missing('subject');
  const html = version?.html ?? call.html;
  const text = version?.text ?? call.text;
  if (html === undefined && text === undefined) missing('htmlContent or textContent');
  const params = call.params || version?.params ? { ...call.params, ...version?.params } : undefined;
  const rendered = params ? await renderTemplate({ subject, html, text }, JSON.stringify({ params }), `${prefix}params`) : { subject, html, text };
  const { tags, ...mail } = shared;
  return {
    stamp: { name: 'brevo', id: messageId(), tags, metadata: {} },
    mail: {
      kind: 'composed',
      ...mail,
      to,
      cc,
      bcc,
      replyTo: version?.replyTo ?? call.replyTo ?? [],
      subject: rendered.subject!,
      html: rendered.html,
      text: rendered.text,
    },
  };
}

async function sendsOf(body: unknown): Promise<ApiSend[]> {
  const o = objectAt(body, 'body');
  refuseStored(o);
  const sender = o.sender === undefined || o.sender === null ? missing('sender') : objectAt(o.sender, 'sender');
  if (sender.id !== undefined && sender.id !== null && sender.email === undefined) {
    fail({ kind: 'unsupported', detail: 'Senders stored at Brevo (sender.id) are not available on this test server: send sender.email' });
  }
  const shared: Shared = {
    from: contactOf(sender, 'sender'),
    headers: headerPairs(o.headers, 'headers'),
    attachments: attachmentsOf(o.attachment),
    tags: tagsOf(o.tags),
  };
  const call = fieldsOf(o, '');
  if (o.messageVersions === undefined || o.messageVersions === null) return [await mailOf(call, undefined, '', shared)];
  if (!Array.isArray(o.messageVersions) || o.messageVersions.length === 0) {
    return fail({ kind: 'invalid', field: 'messageVersions', detail: 'messageVersions must be a list of one or more versions' });
  }
  const sends: ApiSend[] = [];
  for (const [i, entry] of (o.messageVersions as unknown[]).entries()) {
    const prefix = `messageVersions[${i}].`;
    sends.push(await mailOf(call, fieldsOf(objectAt(entry, `messageVersions[${i}]`), prefix), prefix, shared));
  }
  const total = sends.reduce((n, { mail }) => n + (mail.kind === 'composed' ? mail.to.length + mail.cc.length + mail.bcc.length : 0), 0);
  if (total > MAX_CALL_RECIPIENTS)
    fail({ kind: 'too_many_recipients', detail: `The call has ${total} recipients; at most ${MAX_CALL_RECIPIENTS} are allowed` });
  return sends;
}

const idOf = (result: SendResult) => result.send!.stamp.id;

export const BREVO_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'brevo',
    name: 'POST /v3/smtp/email',
    matches: (path) => path === '/v3/smtp/email',
    body: 'json',
    authProblem(headers) {
      const key = headerValue(headers, 'api-key');
      return key === undefined || key.trim() === '' ? 'send your API key in the `api-key` header (`new BrevoClient({ apiKey })`)' : undefined;
    },
    parse: async (request): Promise<ParsedCall> => ({ sends: await sendsOf(jsonBody(request)), batch: 'all' }),
    answer(results, request) {
      const call = request.body.kind === 'json' ? (request.body.value as Record<string, unknown>) : {};
      return call.messageVersions ? json(201, { messageIds: results.map(idOf) }) : json(201, { messageId: idOf(results[0]!) });
    },
    refuse,
  },
];
