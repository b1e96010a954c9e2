// The wire shapes (contract/wire.ts) checked once, at the client's edge, and
// turned into the client's own (messages.ts). A body the contract does not
// describe becomes an `invalid_response` network error naming the field,
// never a stray TypeError three frames away.
import { z } from 'zod';
import { PAGING_PARAM } from '../contract/routes.js';
import { MailroomNetworkError } from './errors.js';
import type { MailSummary, MessageDetail, ServiceFeatures } from './messages.js';

/** An answered request, as the client keeps it until the body is checked. */
export interface Answer {
  readonly method: string;
  readonly url: string;
  readonly address: string | undefined;
  readonly status: number;
  readonly text: string;
}

export function parseBody<T>(answer: Answer, schema: z.ZodType<T>): T {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch (error) {
    throw new MailroomNetworkError({
      ...answer,
      slug: 'invalid_response',
      detail: `answered ${answer.status} with a body that is not JSON: ${JSON.stringify(answer.text.slice(0, 120))}`,
      cause: error,
    });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? ` at \`${issue.path.join('.')}\`` : '';
    throw new MailroomNetworkError({
      ...answer,
      slug: 'invalid_response',
      detail: `answered ${answer.status} with a body the contract does not describe${at}: ${issue?.message ?? 'invalid'}`,
      cause: parsed.error,
    });
  }
  return parsed.data;
}

const Id = z.union([z.string().min(1), z.number()]).transform(String);
const Text = z
  .string()
  .nullish()
  .transform((s) => s ?? '');
const Addresses = z.union([z.array(z.string()), z.string(), z.null(), z.undefined()]).transform((v) => (v == null ? [] : Array.isArray(v) ? v : [v]));
const Timestamp = z.string().transform((s, ctx) => {
  const date = new Date(s);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: 'custom', message: `not an RFC 3339 timestamp: ${JSON.stringify(s)}` });
    return z.NEVER;
  }
  return date;
});

const SummaryFields = {
  id: Id,
  from: Text,
  to: Addresses,
  subject: Text,
  preview: Text,
  received_at: Timestamp,
  size: z
    .number()
    .nullish()
    .transform((n) => n ?? 0),
};

function toSummary(s: { id: string; from: string; to: string[]; subject: string; preview: string; received_at: Date; size: number }): MailSummary {
  return Object.freeze({ id: s.id, from: s.from, to: Object.freeze(s.to), subject: s.subject, preview: s.preview, receivedAt: s.received_at, size: s.size });
}

export const Listing = z.object({
  address: z.string().optional(),
  messages: z.array(z.object(SummaryFields).transform(toSummary)),
  // The embedded server's note of mail the message cap pushed out; anything malformed is simply not there.
  evicted: z
    .object({ count: z.number().int().min(1), newest_id: z.string() })
    .transform((e) => Object.freeze({ count: e.count, newestId: e.newest_id }))
    .optional()
    .catch(undefined),
});

export const WaitAnswer = Listing.extend({ timed_out: z.boolean() });

export const Health = z.object({
  ok: z.unknown().optional(),
  domains: z.array(z.string()).nullish().catch(undefined),
  features: z.object({ wait: z.unknown().optional(), paging: z.unknown().optional() }).nullish(),
});
export const NO_FEATURES: ServiceFeatures = Object.freeze({ wait: undefined, domains: undefined, paging: false });

/** The features a `/healthz` answer advertises; anything unrecognised is simply not offered. */
export function featuresOf(text: string): ServiceFeatures {
  const parsed = Health.safeParse(safeJson(text));
  if (!parsed.success) return NO_FEATURES;
  const wait = parsed.data.features?.wait;
  const domains = parsed.data.domains?.map((d) => d.toLowerCase());
  return Object.freeze({
    wait: typeof wait === 'string' && wait.startsWith('/') ? wait : undefined,
    domains: domains ? Object.freeze(domains) : undefined,
    paging: parsed.data.features?.paging === PAGING_PARAM,
  });
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const Detail = z
  .object({
    ...SummaryFields,
    message_id: z.string().nullish(),
    cc: Addresses,
    date: z.string().nullish(),
    headers: z.record(z.string(), z.union([z.array(z.string()), z.string()])).nullish(),
    text: Text,
    html: Text,
    attachments: z
      .array(
        z.object({
          filename: z.string().nullish(),
          content_type: z.string().nullish(),
          size: z.number().nullish(),
          content_id: z.string().nullish(),
        }),
      )
      .nullish(),
  })
  .transform((m): MessageDetail => {
    const date = m.date ? new Date(m.date) : null;
    return {
      ...toSummary(m),
      messageId: m.message_id ?? null,
      cc: m.cc,
      date: date && !Number.isNaN(date.getTime()) ? date : null,
      headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v : [v]])),
      text: m.text,
      html: m.html,
      attachments: (m.attachments ?? []).map((a) => ({
        filename: a.filename ?? null,
        contentType: a.content_type ?? 'application/octet-stream',
        size: a.size ?? 0,
        contentId: a.content_id ?? null,
      })),
    };
  });

export const Deleted = z.object({ deleted: z.boolean() });
export const MailboxDeleted = z.object({ deleted: z.number() });
export const Status = z.object({ ok: z.boolean() });
