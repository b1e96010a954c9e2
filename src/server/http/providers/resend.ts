// Resend: `POST /emails` and `POST /emails/batch`, as the `resend` SDK
// (6.x) sends them when `RESEND_BASE_URL` (or `new Resend(key, { baseUrl })`)
// points at this server.
//
// Wire facts (shared/research/provider-apis.md §1d; resend-node
// src/resend.ts, src/interfaces.ts, src/batch/batch.ts):
// - auth `Authorization: Bearer re_…`; none: 401 `missing_api_key`, any
//   other shape: 403 `invalid_api_key`;
// - body `from`, `to` (string or array), `cc`, `bcc`, `reply_to`, `subject`,
//   `html`, `text`, `headers` (object), `attachments[{content (base64) |
//   path (URL), filename, content_type, content_id}]`, `tags[{name, value}]`,
//   `scheduled_at`, `template`; the SDK renders `react` to `html` itself;
// - success `200 {"id": "<uuid>"}`; a batch (an array, at most 100) answers
//   `{"data": [{"id"}…]}`, and under `x-batch-validation: permissive` also
//   `"errors": [{"index", "message"}]` for the mails it refused;
// - errors `{statusCode, message, name}`; the SDK returns them (it never
//   throws) as `{ data: null, error: { name, message, statusCode } }`, and
//   one that is not JSON becomes a generic `application_error`, so every
//   answer here is JSON; 429 carries `ratelimit-*` and `retry-after`.
import { randomUUID } from 'node:crypto';
import type { ProviderStamp } from '../../../contract/providers.js';
import { fail, type ApiAttachment, type ApiFailure, type ApiSend } from '../../providers/api-send.js';
import { ApiFailureError } from '../../providers/api-send.js';
import { json, type Reply } from '../edge/reply.js';
import { address, addressesAt, base64At, headerPairs, objectAt, optionalString } from './fields.js';
import {
  headerValue,
  jsonBody,
  retryAfterSeconds,
  type ParsedCall,
  type ProviderOperation,
  type ProviderRequest,
  type SendResult,
} from './provider-operation.js';

/** Recipients one Resend mail may have (To, Cc and Bcc together), and mails one batch may hold. */
const MAX_RECIPIENTS = 50;
const MAX_BATCH = 100;

function error(status: number, name: string, message: string, headers: Record<string, string> = {}): Reply {
  return json(status, { statusCode: status, message, name }, headers);
}

function refuse(failure: ApiFailure): Reply {
  switch (failure.kind) {
    case 'auth':
      return failure.detail.startsWith('Missing') ? error(401, 'missing_api_key', failure.detail) : error(403, 'invalid_api_key', failure.detail);
    case 'invalid':
      return error(422, failure.field && /required|Missing/.test(failure.detail) ? 'missing_required_field' : 'validation_error', failure.detail);
    case 'too_many_recipients':
    case 'unsupported':
      return error(422, 'validation_error', failure.detail);
    case 'too_large':
      return error(413, 'validation_error', failure.detail);
    case 'domain':
      return error(403, 'validation_error', failure.detail);
    case 'rejected':
      return error(422, 'validation_error', failure.detail);
    case 'rate_limited': {
      const after = retryAfterSeconds(failure.retryAfterMs) ?? '1';
      return error(429, 'rate_limit_exceeded', failure.detail, {
        'retry-after': after,
        'ratelimit-limit': '2',
        'ratelimit-remaining': '0',
        'ratelimit-reset': after,
      });
    }
    case 'unavailable':
      return error(failure.status, failure.status === 500 ? 'internal_server_error' : 'application_error', failure.detail);
  }
}

function attachmentOf(value: unknown, field: string): ApiAttachment {
  const a = objectAt(value, field);
  if (a.path !== undefined && a.content === undefined) {
    return fail({
      kind: 'unsupported',
      detail: `\`${field}.path\` (an attachment fetched from a URL) is not supported by this test server: send its \`content\``,
    });
  }
  if (a.content === undefined) return fail({ kind: 'invalid', field: `${field}.content`, detail: `Missing \`${field}.content\` field.` });
  const contentId = optionalString(a, 'content_id', `${field}.content_id`);
  return {
    content: base64At(a.content, `${field}.content`),
    filename: optionalString(a, 'filename', `${field}.filename`),
    contentType: optionalString(a, 'content_type', `${field}.content_type`),
    contentId,
    inline: contentId !== undefined,
  };
}

/** One mail of the call, or why it cannot be one. */
function sendOf(value: unknown, where: string): ApiSend {
  const o = objectAt(value, where || 'body');
  const field = (name: string) => (where ? `${where}.${name}` : name);
  if (o.scheduled_at !== undefined && o.scheduled_at !== null) {
    fail({ kind: 'unsupported', detail: 'Scheduled sending (`scheduled_at`) is not supported by this test server: send without it and the mail arrives now' });
  }
  if (o.template !== undefined && o.template !== null) {
    fail({ kind: 'unsupported', detail: 'Templates stored at Resend (`template`) are not available on this test server: send `html` or `text`' });
  }
  const from = optionalString(o, 'from', field('from'));
  if (from === undefined) fail({ kind: 'invalid', field: field('from'), detail: 'Missing `from` field.' });
  const to = addressesAt(o.to, field('to'));
  if (to.length === 0) fail({ kind: 'invalid', field: field('to'), detail: 'Missing `to` field.' });
  const subject = optionalString(o, 'subject', field('subject'));
  if (subject === undefined) fail({ kind: 'invalid', field: field('subject'), detail: 'Missing `subject` field.' });
  const html = optionalString(o, 'html', field('html'));
  const text = optionalString(o, 'text', field('text'));
  if (html === undefined && text === undefined) fail({ kind: 'invalid', field: field('html'), detail: 'Missing `html` or `text` field.' });
  const cc = addressesAt(o.cc, field('cc'));
  const bcc = addressesAt(o.bcc, field('bcc'));
  if (to.length + cc.length + bcc.length > MAX_RECIPIENTS) {
    fail({ kind: 'too_many_recipients', detail: `Too many recipients: a mail may have at most ${MAX_RECIPIENTS} (to, cc and bcc together).` });
  }
  const attachments = o.attachments === undefined || o.attachments === null ? [] : o.attachments;
  if (!Array.isArray(attachments)) fail({ kind: 'invalid', field: field('attachments'), detail: '`attachments` must be an array' });
  const tags = o.tags === undefined || o.tags === null ? [] : o.tags;
  if (!Array.isArray(tags)) fail({ kind: 'invalid', field: field('tags'), detail: '`tags` must be an array' });
  const metadata = Object.fromEntries(
    (tags as unknown[]).map((tag, i) => {
      const t = objectAt(tag, field(`tags[${i}]`));
      const name = optionalString(t, 'name', field(`tags[${i}].name`));
      const value = optionalString(t, 'value', field(`tags[${i}].value`));
      if (name === undefined || !/^[A-Za-z0-9_-]{1,256}$/.test(name) || (value !== undefined && !/^[A-Za-z0-9_-]{0,256}$/.test(value))) {
        fail({ kind: 'invalid', field: field(`tags[${i}]`), detail: 'Tags should only contain ASCII letters, numbers, underscores, or dashes.' });
      }
      return [name, value ?? ''];
    }),
  );
  const stamp: ProviderStamp = { name: 'resend', id: randomUUID(), tags: [], metadata };
  return {
    stamp,
    mail: {
      kind: 'composed',
      from: address(from, field('from')),
      to,
      cc,
      bcc,
      replyTo: addressesAt(o.reply_to, field('reply_to')),
      subject: subject,
      text,
      html,
      headers: headerPairs(o.headers, field('headers')),
      attachments: (attachments as unknown[]).map((a, i) => attachmentOf(a, field(`attachments[${i}]`))),
    },
  };
}

const auth = {
  authProblem(headers: ProviderRequest['headers']): string | undefined {
    const value = headerValue(headers, 'authorization');
    if (value === undefined)
      return 'Missing API key in the authorization header. Include the following header `Authorization: Bearer YOUR_API_KEY` in the request.';
    return /^Bearer \S+$/.test(value) ? undefined : 'API key is invalid: the authorization header must be `Bearer YOUR_API_KEY`';
  },
};

const idOf = (result: SendResult) => (result.outcome.kind === 'accepted' ? result.send!.stamp.id : undefined);

export const RESEND_OPERATIONS: readonly ProviderOperation[] = [
  {
    provider: 'resend',
    name: 'POST /emails',
    matches: (path) => path === '/emails',
    body: 'json',
    ...auth,
    parse: (request): ParsedCall => ({ sends: [sendOf(jsonBody(request), '')], batch: 'all' }),
    answer: (results) => json(200, { id: idOf(results[0]!) }),
    refuse,
  },
  {
    provider: 'resend',
    name: 'POST /emails/batch',
    matches: (path) => path === '/emails/batch',
    body: 'json',
    ...auth,
    parse(request): ParsedCall {
      const mode = headerValue(request.headers, 'x-batch-validation') ?? 'strict';
      if (mode !== 'strict' && mode !== 'permissive') {
        fail({
          kind: 'invalid',
          field: 'x-batch-validation',
          detail: `Invalid \`x-batch-validation\` header ${JSON.stringify(mode)}: use strict or permissive`,
        });
      }
      const list = jsonBody(request);
      if (!Array.isArray(list)) return fail({ kind: 'invalid', detail: 'The batch must be an array of emails' });
      if (list.length === 0 || list.length > MAX_BATCH) fail({ kind: 'invalid', detail: `A batch holds 1 to ${MAX_BATCH} emails, got ${list.length}` });
      const sends = list.map((item, i): ApiSend | ApiFailure => {
        try {
          return sendOf(item, `[${i}]`);
        } catch (caught) {
          if (caught instanceof ApiFailureError) return caught.failure;
          throw caught;
        }
      });
      return { sends, batch: mode === 'permissive' ? 'each' : 'all' };
    },
    answer(results, request) {
      const data = results.flatMap((r) => (r.outcome.kind === 'accepted' ? [{ id: idOf(r) }] : []));
      if (headerValue(request.headers, 'x-batch-validation') !== 'permissive') return json(200, { data });
      const errors = results.flatMap((r, index) => (r.outcome.kind === 'failed' ? [{ index, message: r.outcome.failure.detail }] : []));
      return json(200, { data, errors });
    },
    refuse,
  },
];
