// SendGrid v3: `POST /v3/mail/send`, as `@sendgrid/mail` (8.x) sends it when
// its client's base URL points at this server:
// `sgMail.setApiKey(key); sgMail.client.setDefaultRequest('baseUrl', server + '/')`
// in that order (setApiKey resets the base URL), or a Client given to
// `sgMail.setClient`. No environment variable reads it.
//
// Wire facts (shared/research/provider-apis.md §1c, §2; sendgrid-nodejs@498e232
// packages/client/src/classes/client.js:14-52,153-171 and
// packages/helpers/classes/response-error.js:11-23, the same lines in
// node_modules/@sendgrid/client 8.1.6 and @sendgrid/helpers; the Mail Send
// reference and its error list, twilio.com/docs/sendgrid/api-reference/mail-send):
// - auth `Authorization: Bearer <key>` (the SDK warns unless the key starts
//   with `SG.`; any key is taken here); none, or not `Bearer <key>`: 401;
// - body `personalizations[{to, cc, bcc, from, subject, headers,
//   substitutions, custom_args, send_at, dynamic_template_data}]`, `from`,
//   `reply_to` or `reply_to_list`, `subject`, `content[{type, value}]`,
//   `attachments[{content (base64), type, filename, disposition,
//   content_id}]`, `headers`, `categories`, `custom_args`, `template_id`,
//   `send_at`, `batch_id`, `mail_settings.sandbox_mode.enable`; addresses are
//   `{email, name}`. Each personalization is a mail of its own: its
//   recipients, and its subject, headers, custom args and from over the
//   request's; its `substitutions` replace their keys (already wrapped by
//   the SDK, `{{name}}`) in the subject and the content. Categories are the
//   stamp's tags, custom args its metadata;
// - success `202` with an empty body and `X-Message-Id` (every mail of the
//   call shares it, as at SendGrid); with sandbox mode on, `200` and nothing
//   stored: SendGrid's sandbox validates the request and sends nothing;
// - errors `{"errors": [{"message", "field", "help"}]}`: 400 for any
//   invalid field (`field` names it, `personalizations.0.to.0.email`), 401,
//   413, 429 with `X-RateLimit-Limit`, `X-RateLimit-Remaining` and
//   `X-RateLimit-Reset` (epoch seconds), 500, 503. The SDK does not retry;
//   it rejects with `ResponseError` (`code` = the status, `response.body`
//   = this body), the same class for every status, so the status and
//   `errors[0].field` are what tell one refusal from another.
// - the whole request is validated before any mail is taken: one bad
//   personalization refuses the call (batch rule `all`).
//
// Not SendGrid's, added: `Retry-After` on a 429 (SendGrid's SDK ignores it;
// an app that reads it, and `toHaveBackedOff`, see the wait the lab asked
// for). Choices where SendGrid has no synchronous answer: a recipient the
// lab rejects for good is a 400 naming it (SendGrid takes such mail and
// reports it `dropped` later, which an app cannot see in its call).
// Stored at SendGrid, so refused as unsupported: `template_id`,
// `dynamic_template_data`, `send_at`, `batch_id`.
import { randomBytes } from 'node:crypto';
import { parseMailboxAddress } from '../../../contract/address.js';
import type { ProviderStamp } from '../../../contract/providers.js';
import { fail, type ApiAddress, type ApiAttachment, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { base64At, headerPairs, objectAt, optionalString } from './fields.js';
import { headerValue, jsonBody, retryAfterSeconds, type ParsedCall, type ProviderOperation } from './provider-operation.js';

/** SendGrid's limits for one request: personalizations, and recipients over all of them. */
const MAX_PERSONALIZATIONS = 1000;
const MAX_RECIPIENTS = 1000;
const MAX_CATEGORIES = 10;
/** What the 429 says the limit is: the figure SendGrid's rate-limit page shows. */
const RATE_LIMIT = '500';

function error(status: number, message: string, field: string | null = null, headers: Record<string, string> = {}): Reply {
  return json(status, { errors: [{ message, field, help: null }] }, headers);
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return error(401, failure.detail);
    case 'invalid':
    case 'unsupported':
      return error(400, failure.detail, failure.field ?? null);
    case 'too_many_recipients':
      return error(400, failure.detail, 'personalizations');
    case 'too_large':
      return error(413, failure.detail);
    case 'domain':
      return error(400, failure.detail);
    case 'rejected':
      return error(400, `The recipient ${failure.recipient} is refused for good: ${failure.detail}`);
    case 'rate_limited': {
      const after = retryAfterSeconds(failure.retryAfterMs) ?? '1';
      return error(429, 'too many requests', null, {
        'x-ratelimit-limit': RATE_LIMIT,
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + Number(after)),
        'retry-after': after,
      });
    }
    case 'unavailable':
      return error(failure.status, failure.detail);
  }
}

const invalid = (field: string, detail: string): never => fail({ kind: 'invalid', field, detail });
const isAbsent = (value: unknown): boolean => value === undefined || value === null;

/** An `{email, name}` object, the address checked. */
function emailAt(value: unknown, field: string): ApiAddress {
  const o = objectAt(value, field);
  const email = optionalString(o, 'email', `${field}.email`);
  if (email === undefined) invalid(`${field}.email`, `The email parameter is required in ${field}.`);
  if (parseMailboxAddress(email!) === undefined) invalid(`${field}.email`, `Does not contain a valid address: ${JSON.stringify(email)}.`);
  const name = optionalString(o, 'name', `${field}.name`);
  return name ? { address: email!, name } : { address: email! };
}

function emailsAt(value: unknown, field: string): ApiAddress[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return invalid(field, `${field} must be an array of {email, name} objects.`);
  return value.map((entry, i) => emailAt(entry, `${field}.${i}`));
}

/** String values of an object (`custom_args`, `substitutions`), each named in a refusal. */
function stringsAt(value: unknown, field: string, numbers = false): Record<string, string> {
  if (isAbsent(value)) return {};
  const o = objectAt(value, field);
  return Object.fromEntries(
    Object.entries(o).map(([key, v]) => {
      if (typeof v !== 'string' && !(numbers && typeof v === 'number')) invalid(`${field}.${key}`, `Invalid type. Expected: string, given: ${typeof v}.`);
      return [key, String(v)];
    }),
  );
}

/** The request's `content`: its text/plain and text/html values, in SendGrid's order. */
function contentOf(value: unknown): { text: string | undefined; html: string | undefined } {
  if (isAbsent(value) || (Array.isArray(value) && value.length === 0)) {
    invalid('content', 'Unless a valid template_id is provided, the content parameter is required. There must be at least one defined content block.');
  }
  if (!Array.isArray(value)) return invalid('content', 'content must be an array of {type, value} objects.');
  const parts: { text?: string; html?: string } = {};
  value.forEach((entry, i) => {
    const c = objectAt(entry, `content.${i}`);
    const type = optionalString(c, 'type', `content.${i}.type`);
    const text = optionalString(c, 'value', `content.${i}.value`);
    if (type === undefined) invalid(`content.${i}.type`, 'The content type is required.');
    if (!text) invalid(`content.${i}.value`, 'The content value must be a string at least one character in length.');
    const kind = type!.toLowerCase() === 'text/plain' ? 'text' : type!.toLowerCase() === 'text/html' ? 'html' : undefined;
    if (kind === undefined) {
      fail({
        kind: 'unsupported',
        field: `content.${i}.type`,
        detail: `Content of type ${JSON.stringify(type)} is not supported by this test server: send text/plain and text/html`,
      });
    }
    if (parts[kind] !== undefined) invalid(`content.${i}.type`, 'If present, text/plain and text/html may only be provided once.');
    if (kind === 'text' && parts.html !== undefined) invalid('content', 'If present, text/plain must be first, followed by text/html.');
    parts[kind] = text;
  });
  return { text: parts.text, html: parts.html };
}

function attachmentsOf(value: unknown): ApiAttachment[] {
  if (isAbsent(value)) return [];
  if (!Array.isArray(value)) return invalid('attachments', 'attachments must be an array.');
  return value.map((entry, i) => {
    const field = `attachments.${i}`;
    const a = objectAt(entry, field);
    if (a.content === undefined || a.content === '') invalid(`${field}.content`, 'The attachment content is required.');
    const filename = optionalString(a, 'filename', `${field}.filename`);
    if (!filename) invalid(`${field}.filename`, 'The attachment filename parameter is required.');
    const disposition = optionalString(a, 'disposition', `${field}.disposition`) ?? 'attachment';
    if (disposition !== 'attachment' && disposition !== 'inline') invalid(`${field}.disposition`, 'The disposition must be inline or attachment.');
    const contentId = optionalString(a, 'content_id', `${field}.content_id`);
    if (disposition === 'inline' && !contentId) invalid(`${field}.content_id`, 'The content_id parameter is required if disposition is set to inline.');
    return {
      content: base64At(a.content, `${field}.content`),
      filename,
      contentType: optionalString(a, 'type', `${field}.type`),
      contentId,
      inline: disposition === 'inline',
    };
  });
}

/** A substitution's keys replaced by their values, literally, as SendGrid does. */
function substitute(text: string | undefined, substitutions: Record<string, string>): string | undefined {
  if (text === undefined) return undefined;
  return Object.entries(substitutions).reduce((out, [key, value]) => (key === '' ? out : out.split(key).join(value)), text);
}

/** Headers of the request, then a personalization's over them (a name given in both: the personalization's). */
function mergeHeaders(base: readonly [string, string][], over: readonly [string, string][]): [string, string][] {
  const names = new Set(over.map(([name]) => name.toLowerCase()));
  return [...base.filter(([name]) => !names.has(name.toLowerCase())), ...over];
}

function refuseStored(o: Record<string, unknown>, key: string, field: string, what: string): void {
  if (!isAbsent(o[key])) fail({ kind: 'unsupported', field, detail: `${what} (\`${field}\`) is not supported by this test server: ${unsupportedAdvice(key)}` });
}

function unsupportedAdvice(key: string): string {
  if (key === 'send_at') return 'send without it and the mail arrives now';
  if (key === 'batch_id') return 'send without it';
  return 'send the mail with `content` (text/plain, text/html) instead';
}

/** The call's mails (one per personalization), and whether it asks for the sandbox (validate, send nothing). */
function mailsOf(body: unknown): { sends: ApiSend[]; sandbox: boolean } {
  const o = objectAt(body, 'body');
  refuseStored(o, 'template_id', 'template_id', 'Templates stored at SendGrid');
  refuseStored(o, 'send_at', 'send_at', 'Scheduled sending');
  refuseStored(o, 'batch_id', 'batch_id', 'Batches of scheduled sends');
  if (!Array.isArray(o.personalizations) || o.personalizations.length === 0) {
    invalid('personalizations', 'You must have at least one personalization.');
  }
  const personalizations = o.personalizations as unknown[];
  if (personalizations.length > MAX_PERSONALIZATIONS) {
    invalid('personalizations', `The personalization block is limited to ${MAX_PERSONALIZATIONS} personalizations per API request.`);
  }
  if (isAbsent(o.from)) {
    invalid('from', 'The from object must be provided for every email send. It is an object that requires the email parameter, but may also contain a name.');
  }
  const from = emailAt(o.from, 'from');
  if (!isAbsent(o.reply_to) && !isAbsent(o.reply_to_list)) invalid('reply_to_list', 'reply_to and reply_to_list cannot be used together.');
  const replyTo = isAbsent(o.reply_to) ? emailsAt(o.reply_to_list, 'reply_to_list') : [emailAt(o.reply_to, 'reply_to')];
  const subject = optionalString(o, 'subject');
  const { text, html } = contentOf(o.content);
  const attachments = attachmentsOf(o.attachments);
  const headers = headerPairs(o.headers, 'headers');
  const customArgs = stringsAt(o.custom_args, 'custom_args');
  const categories = isAbsent(o.categories) ? [] : o.categories;
  if (!Array.isArray(categories) || !categories.every((c) => typeof c === 'string' && c.length > 0 && c.length <= 255)) {
    return invalid('categories', 'categories must be an array of strings of 1 to 255 characters.');
  }
  if (categories.length > MAX_CATEGORIES) invalid('categories', `Too many categories: at most ${MAX_CATEGORIES}.`);
  const settings = isAbsent(o.mail_settings) ? {} : objectAt(o.mail_settings, 'mail_settings');
  const sandboxSetting = isAbsent(settings.sandbox_mode) ? {} : objectAt(settings.sandbox_mode, 'mail_settings.sandbox_mode');

  const id = randomBytes(16).toString('base64url');
  let recipients = 0;
  const sends = personalizations.map((entry, i): ApiSend => {
    const field = `personalizations.${i}`;
    const p = objectAt(entry, field);
    refuseStored(p, 'send_at', `${field}.send_at`, 'Scheduled sending');
    refuseStored(p, 'dynamic_template_data', `${field}.dynamic_template_data`, 'Dynamic templates stored at SendGrid');
    const to = emailsAt(p.to, `${field}.to`);
    if (to.length === 0) {
      invalid(`${field}.to`, 'The to array is required for all personalization objects, and must have at least one email object with a valid email address.');
    }
    const cc = emailsAt(p.cc, `${field}.cc`);
    const bcc = emailsAt(p.bcc, `${field}.bcc`);
    const seen = new Set<string>();
    for (const [list, role] of [
      [to, 'to'],
      [cc, 'cc'],
      [bcc, 'bcc'],
    ] as const) {
      for (const a of list) {
        const key = a.address.toLowerCase();
        if (seen.has(key)) {
          invalid(
            field,
            `Each email address in the personalization block should be unique between to, cc, and bcc. We found the first duplicate instance of [${a.address}] in the ${field}.${role} field.`,
          );
        }
        seen.add(key);
      }
    }
    recipients += seen.size;
    if (recipients > MAX_RECIPIENTS) {
      fail({ kind: 'too_many_recipients', detail: `There is a limit of ${MAX_RECIPIENTS} total recipients (to + cc + bcc) per request.` });
    }
    const substitutions = stringsAt(p.substitutions, `${field}.substitutions`, true);
    const ownSubject = optionalString(p, 'subject', `${field}.subject`) ?? subject;
    if (!ownSubject) {
      invalid(
        'subject',
        'The subject is required. You can get around this requirement if you use a template with a subject defined or if every personalization has a subject defined.',
      );
    }
    const stamp: ProviderStamp = {
      name: 'sendgrid',
      id,
      tags: categories as string[],
      metadata: { ...customArgs, ...stringsAt(p.custom_args, `${field}.custom_args`) },
    };
    return {
      stamp,
      mail: {
        kind: 'composed',
        from: isAbsent(p.from) ? from : emailAt(p.from, `${field}.from`),
        to,
        cc,
        bcc,
        replyTo,
        subject: substitute(ownSubject, substitutions)!,
        text: substitute(text, substitutions),
        html: substitute(html, substitutions),
        headers: mergeHeaders(headers, headerPairs(p.headers, `${field}.headers`)),
        attachments,
      },
    };
  });
  return { sends, sandbox: sandboxSetting.enable === true };
}

export const SENDGRID_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'sendgrid',
    name: 'POST /v3/mail/send',
    matches: (path) => path === '/v3/mail/send',
    body: 'json',
    authProblem(headers) {
      const value = headerValue(headers, 'authorization');
      if (value === undefined) return 'authorization required: send the header `Authorization: Bearer <API key>` (any key is taken here)';
      return /^Bearer \S+$/.test(value)
        ? undefined
        : 'The provided authorization grant is invalid, expired, or revoked: the Authorization header must be `Bearer <API key>`';
    },
    parse(request): ParsedCall {
      const { sends, sandbox } = mailsOf(jsonBody(request));
      // The sandbox validates the whole request, then takes none of it.
      return { sends: sandbox ? [] : sends, batch: 'all' };
    },
    answer(results) {
      if (results.length === 0) return { status: 200, headers: {}, body: '' };
      const failed = results.find((r) => r.outcome.kind === 'failed');
      if (failed?.outcome.kind === 'failed') return refuse(failed.outcome.failure);
      return { status: 202, headers: { 'x-message-id': results[0]!.send!.stamp.id }, body: '' };
    },
    refuse,
  },
];
