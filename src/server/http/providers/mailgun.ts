// Mailgun: `POST /v3/{domain}/messages` and `POST /v3/{domain}/messages.mime`,
// as `mailgun.js` (14.x) sends them when its client's `url` points at this
// server: `new Mailgun(FormData).client({ username: 'api', key, url })`.
// Any sending domain is taken; it shows in the id the answer carries.
//
// Wire facts (shared/research/provider-apis.md §1f; mailgun.js 14.0.1
// lib/Classes/Messages.ts, lib/Classes/common/FormDataBuilder.ts, read as
// node_modules/mailgun.js/ESM/mailgun.node.js and Types/):
// - auth HTTP Basic `api:<key>` (AxiosProvider addRequestLevelHeaders);
//   missing, another user or an empty key: `401`, body `Forbidden`, as
//   Mailgun answers a bad key;
// - body multipart/form-data (or urlencoded, which Mailgun also takes):
//   `from`, `to`/`cc`/`bcc` (repeatable, each may be a comma-separated
//   list), `subject`, `text`, `html`, files `attachment` and `inline` (an
//   inline file is referred to as `cid:<its filename>`), `h:<Header>` custom
//   headers (`h:Reply-To` the reply address), `o:tag` (repeatable: the
//   stamp's tags), `v:<name>` user variables (the stamp's metadata),
//   `o:testmode=yes` (answered as sent, nothing stored: Mailgun's test mode);
//   `amp-html` and the other `o:` options are taken and ignored; a stored
//   `template`, a scheduled `o:deliverytime` and batch sending
//   (`recipient-variables`) are refused as unsupported;
// - `messages.mime`: fields `to` (the envelope) and the file `message` (the
//   MIME source, uploaded by the SDK with the filename `MimeMessage`);
// - success `200 {"id": "<20151025002517.117282.79817@{domain}>",
//   "message": "Queued. Thank you."}` (mailgun.js README);
// - errors `{"message": "…"}` with 400, 413, 429 (with `Retry-After`), 500
//   or 503 (https://documentation.mailgun.com/docs/mailgun/quickstart-guide/responses).
//   The SDK throws its `APIError` (Types/Classes/common/Error.d.ts; minified
//   to `j` in ESM/mailgun.node.js) for every status, with `status`, the
//   body's `message` as `details` and `type: 'MailgunAPIError'`, which
//   `APIError.isApiError` checks: an app tells Mailgun's errors apart by status.
import { randomInt } from 'node:crypto';
import type { ProviderStamp } from '../../../contract/providers.js';
import { fail, type ApiAddress, type ApiAttachment, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { address, addressList, formValue, formValues } from './fields.js';
import { headerValue, retryAfterSeconds, type ParsedCall, type ProviderOperation, type ProviderRequest } from './provider-operation.js';
import type { FormBody } from './request-body.js';

/** Mailgun's limit: 1,000 recipients a message (To, Cc and Bcc together). */
const MAX_RECIPIENTS = 1000;
const QUEUED = 'Queued. Thank you.';
const MESSAGES = /^\/v3\/([^/]+)\/messages$/;
const MIME = /^\/v3\/([^/]+)\/messages\.mime$/;

const invalid = (detail: string, field?: string): never => fail({ kind: 'invalid', field, detail });

function error(status: number, message: string, headers: Record<string, string> = {}): Reply {
  return json(status, { message }, headers);
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return { status: 401, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: `Forbidden: ${failure.detail}` };
    case 'invalid':
    case 'too_many_recipients':
    case 'unsupported':
    case 'domain':
    case 'rejected':
      return error(400, failure.detail);
    case 'too_large':
      return error(413, failure.detail);
    case 'rate_limited':
      return error(429, failure.detail, { 'retry-after': retryAfterSeconds(failure.retryAfterMs) ?? '1' });
    case 'unavailable':
      return error(failure.status, failure.detail);
  }
}

function authProblem(headers: ProviderRequest['headers']): string | undefined {
  const expected = "the Authorization header must be HTTP Basic with the user `api` and your API key (mailgun.js: `client({ username: 'api', key })`)";
  const value = headerValue(headers, 'authorization');
  const credentials = value === undefined ? undefined : /^Basic ([A-Za-z0-9+/]+={0,2})$/.exec(value)?.[1];
  if (credentials === undefined) return `${value === undefined ? 'no Authorization header' : 'not HTTP Basic'}: ${expected}`;
  const [user, ...key] = Buffer.from(credentials, 'base64').toString('utf8').split(':');
  if (user !== 'api') return `the user is ${JSON.stringify(user)}: ${expected}`;
  if (key.join(':') === '') return `the API key is empty: ${expected}`;
  return undefined;
}

/** The sending domain of the call's path, as its ids name it. */
function domainOf(path: string): string {
  const raw = (MESSAGES.exec(path) ?? MIME.exec(path))![1]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** `<20151025002517.117282.79817@domain>`: a Mailgun message id. */
function messageId(domain: string): string {
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  return `<${stamp}.${randomInt(100_000, 1_000_000)}.${randomInt(10_000, 100_000)}@${domain}>`;
}

/** Every address of a repeatable field, each value a comma-separated list. */
function addressesOf(form: FormBody, field: string): ApiAddress[] {
  return formValues(form, field).flatMap((text) => addressList(text, field));
}

/** The call's `o:tag`s and `v:` variables as the stamp has them, with the id. */
function stampOf(form: FormBody, domain: string): ProviderStamp {
  const metadata = Object.fromEntries(form.fields.filter(([name]) => name.startsWith('v:')).map(([name, value]) => [name.slice(2), value]));
  return { name: 'mailgun', id: messageId(domain), tags: formValues(form, 'o:tag'), metadata };
}

/** Mailgun's test mode: validated and answered, not sent (`o:testmode=yes`; the SDK sends `true` as `yes`). */
const testMode = (form: FormBody) => /^(yes|true)$/i.test(formValue(form, 'o:testmode') ?? '');

function refuseStored(form: FormBody): void {
  if (formValue(form, 'template') !== undefined) {
    fail({ kind: 'unsupported', detail: "Templates stored at Mailgun ('template') are not available on this test server: send 'text' or 'html'" });
  }
  for (const option of ['o:deliverytime', 'o:deliverytime-optimize-period', 'o:time-zone-localize']) {
    if (formValue(form, option) !== undefined) {
      fail({
        kind: 'unsupported',
        detail: `Scheduled sending ('${option}') is not supported by this test server: send without it and the message arrives now`,
      });
    }
  }
  if (formValue(form, 'recipient-variables') !== undefined) {
    fail({ kind: 'unsupported', detail: "Batch sending ('recipient-variables') is not supported by this test server: send one message per recipient" });
  }
}

function tooMany(count: number): void {
  if (count > MAX_RECIPIENTS)
    fail({ kind: 'too_many_recipients', detail: `Too many recipients: a message may have at most ${MAX_RECIPIENTS} (to, cc and bcc together)` });
}

/**
 * The `attachment` or `inline` files; a field of that name sent as text is
 * refused. A file sent as `application/octet-stream` gets its type from its
 * filename, as the composer guesses it: mailgun.js with Node's FormData
 * sends every buffer that way, whatever `contentType` the app gave
 * (FormDataBuilder addFilesToFD wraps it in a `Blob` without a type).
 */
function filesOf(form: FormBody, field: 'attachment' | 'inline'): ApiAttachment[] {
  if (formValues(form, field).length > 0) invalid(`'${field}' must be sent as a file, in a multipart/form-data body`, field);
  return form.files
    .filter(([name]) => name === field)
    .map(([, file]) => ({
      content: file.content,
      filename: file.filename,
      contentType: file.contentType === 'application/octet-stream' ? undefined : file.contentType,
      contentId: field === 'inline' ? file.filename : undefined,
      inline: field === 'inline',
    }));
}

/** `h:X-Campaign` custom headers, and `h:Reply-To` as the reply address. */
function headersOf(form: FormBody): { headers: [string, string][]; replyTo: ApiAddress[] } {
  const headers: [string, string][] = [];
  const replyTo: ApiAddress[] = [];
  for (const [field, value] of form.fields) {
    if (!field.startsWith('h:')) continue;
    const name = field.slice(2);
    if (!/^[!-9;-~]+$/.test(name)) invalid(`'${field}': ${JSON.stringify(name)} is not a header name`, field);
    if (name.toLowerCase() === 'reply-to') replyTo.push(...addressList(value, field));
    else headers.push([name, value]);
  }
  return { headers, replyTo };
}

function messageOf(form: FormBody, domain: string): ApiSend {
  refuseStored(form);
  const from = formValue(form, 'from') ?? invalid("'from' parameter is missing", 'from');
  const to = addressesOf(form, 'to');
  if (to.length === 0) invalid("'to' parameter is missing", 'to');
  const cc = addressesOf(form, 'cc');
  const bcc = addressesOf(form, 'bcc');
  tooMany(to.length + cc.length + bcc.length);
  const subject = formValue(form, 'subject') ?? invalid("'subject' parameter is missing", 'subject');
  const text = formValue(form, 'text');
  const html = formValue(form, 'html');
  if (text === undefined && html === undefined) invalid("Need at least one of 'text' or 'html' parameters specified", 'text');
  const { headers, replyTo } = headersOf(form);
  return {
    stamp: stampOf(form, domain),
    mail: {
      kind: 'composed',
      from: address(from, 'from'),
      to,
      cc,
      bcc,
      replyTo,
      subject,
      text,
      html,
      headers,
      attachments: [...filesOf(form, 'attachment'), ...filesOf(form, 'inline')],
    },
  };
}

function mimeOf(form: FormBody, domain: string): ApiSend {
  refuseStored(form);
  const recipients = addressesOf(form, 'to').map((a) => a.address);
  if (recipients.length === 0) invalid("'to' parameter is missing", 'to');
  tooMany(recipients.length);
  const files = form.files.filter(([name]) => name === 'message');
  const text = formValues(form, 'message');
  if (files.length + text.length === 0) invalid("'message' parameter is missing: send the MIME source as the file 'message'", 'message');
  if (files.length + text.length > 1) invalid("'message' was sent more than once", 'message');
  const source = files[0]?.[1].content ?? Buffer.from(text[0]!, 'utf8');
  return { stamp: stampOf(form, domain), mail: { kind: 'raw', source, from: undefined, recipients } };
}

/** Test mode's call is read and checked like any other, then answered with no send at all. */
function callOf(request: ProviderRequest, read: (form: FormBody, domain: string) => ApiSend): ParsedCall {
  const form: FormBody = request.body.kind === 'form' ? request.body : { fields: [], files: [] };
  const send = read(form, domainOf(request.path));
  return { sends: testMode(form) ? [] : [send], batch: 'all' };
}

/** The answer to a taken call; a test-mode call took no send and gets an id of its own. */
function answer(results: readonly { send: ApiSend | undefined }[], request: ProviderRequest): Reply {
  return json(200, { id: results[0]?.send?.stamp.id ?? messageId(domainOf(request.path)), message: QUEUED });
}

export const MAILGUN_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'mailgun',
    name: 'POST /v3/{domain}/messages',
    matches: (path) => MESSAGES.test(path),
    body: 'multipart',
    authProblem,
    parse: (request) => callOf(request, messageOf),
    answer,
    refuse,
  },
  {
    provider: 'mailgun',
    name: 'POST /v3/{domain}/messages.mime',
    matches: (path) => MIME.test(path),
    body: 'multipart',
    authProblem,
    parse: (request) => callOf(request, mimeOf),
    answer,
    refuse,
  },
];
