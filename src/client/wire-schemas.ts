// The wire shapes (contract/wire.ts) checked once, at the client's edge, and
// turned into the client's own (messages.ts). A body the contract does not
// describe becomes an `invalid_response` network error naming the field,
// never a stray TypeError three frames away.
import { z } from 'zod';
import { PAGING_PARAM } from '../contract/routes.js';
import { MailroomNetworkError } from './errors.js';
import type { MailboxIndex, MailSummary, MessageDetail, ServiceFeatures } from './messages.js';
import { PROVIDER_NAMES, type ProviderName } from '../contract/providers.js';
import { SMTP_ATTEMPT_OUTCOMES, SMTP_ATTEMPT_STAGES, SMTP_RULE_KINDS, SMTP_RULE_STAGES } from '../contract/smtp-lab.js';
import type { SmtpAttempt, SmtpRule } from './smtp-lab.js';

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
/** An RFC 3339 time on the wire, as a Date. */
export const Timestamp = z.string().transform((s, ctx) => {
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

export const MailboxIndexAnswer = z
  .object({
    total: z.number().int().min(0),
    mailboxes: z.array(z.object({ address: z.string(), count: z.number().int().min(0), newest: z.object(SummaryFields).transform(toSummary) })),
    partial: z.boolean().optional(),
  })
  .transform((index): MailboxIndex =>
    Object.freeze({ total: index.total, mailboxes: Object.freeze(index.mailboxes.map((m) => Object.freeze(m))), partial: index.partial === true }),
  );

export const Health = z.object({
  ok: z.unknown().optional(),
  domains: z.array(z.string()).nullish().catch(undefined),
  catch_all: z.boolean().nullish().catch(undefined),
  features: z
    .object({
      wait: z.unknown().optional(),
      paging: z.unknown().optional(),
      smtp_rules: z.unknown().optional(),
      smtp_attempts: z.unknown().optional(),
      webhooks: z.unknown().optional(),
      mailboxes: z.unknown().optional(),
    })
    .nullish(),
});
export const NO_FEATURES: ServiceFeatures = Object.freeze({
  wait: undefined,
  domains: undefined,
  paging: false,
  smtpRules: undefined,
  smtpAttempts: undefined,
  webhooks: undefined,
  mailboxes: undefined,
});

const pathOf = (value: unknown): string | undefined => (typeof value === 'string' && value.startsWith('/') ? value : undefined);

/** The features a `/healthz` answer advertises; anything unrecognised is simply not offered. */
export function featuresOf(text: string): ServiceFeatures {
  const parsed = Health.safeParse(safeJson(text));
  if (!parsed.success) return NO_FEATURES;
  const features = parsed.data.features;
  // A service that catches every domain's mail serves every address: no domain can be refused.
  const domains = parsed.data.catch_all === true ? undefined : parsed.data.domains?.map((d) => d.toLowerCase());
  return Object.freeze({
    wait: pathOf(features?.wait),
    domains: domains ? Object.freeze(domains) : undefined,
    paging: features?.paging === PAGING_PARAM,
    smtpRules: pathOf(features?.smtp_rules),
    smtpAttempts: pathOf(features?.smtp_attempts),
    webhooks: pathOf(features?.webhooks),
    mailboxes: pathOf(features?.mailboxes),
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

// --- the SMTP deferral lab -----------------------------------------------------

const Stage = z.enum(SMTP_RULE_STAGES as [string, ...string[]]) as z.ZodType<'rcpt' | 'data'>;
const Times = z.number().int().min(1);

const WireRule = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('greylist'), min_delay_ms: z.number(), reset_on_early_retry: z.boolean() }),
    z.object({ kind: z.literal('throttle'), limit: z.number(), per_ms: z.number() }),
    z.object({
      kind: z.enum(['defer', 'reject']),
      code: z.number().int(),
      enhanced_code: z.string(),
      text: z.string().nullish(),
      stage: Stage,
      times: Times,
    }),
    z.object({ kind: z.literal('slow'), delay_ms: z.number(), stage: Stage, times: Times.nullable() }),
    z.object({ kind: z.literal('disconnect'), stage: Stage, times: Times }),
    z.object({ kind: z.literal('rate_limit'), retry_after_ms: z.number(), stage: Stage, times: Times }),
    z.object({ kind: z.literal('unavailable'), status: z.number().int(), stage: Stage, times: Times }),
  ])
  .and(z.object({ id: z.string(), set_at: Timestamp, remaining: z.number().int().min(0).nullable() }))
  .transform((r): SmtpRule => {
    const head = { id: r.id, setAt: r.set_at, remaining: r.remaining };
    switch (r.kind) {
      case 'greylist':
        return Object.freeze({ ...head, kind: r.kind, minDelay: r.min_delay_ms, resetOnEarlyRetry: r.reset_on_early_retry });
      case 'throttle':
        return Object.freeze({ ...head, kind: r.kind, limit: r.limit, per: r.per_ms });
      case 'defer':
      case 'reject':
        return Object.freeze({ ...head, kind: r.kind, code: r.code, enhanced: r.enhanced_code, text: r.text ?? null, stage: r.stage, times: r.times });
      case 'slow':
        return Object.freeze({ ...head, kind: r.kind, delayMs: r.delay_ms, stage: r.stage, times: r.times });
      case 'disconnect':
        return Object.freeze({ ...head, kind: r.kind, stage: r.stage, times: r.times });
      case 'rate_limit':
        return Object.freeze({ ...head, kind: r.kind, retryAfter: r.retry_after_ms, stage: r.stage, times: r.times });
      case 'unavailable':
        return Object.freeze({ ...head, kind: r.kind, status: r.status, stage: r.stage, times: r.times });
    }
  });

export const SmtpRules = z.object({ rules: z.array(WireRule) });
export const SmtpRuleAdded = z.object({ rule: WireRule, rules: z.array(WireRule) });
export const SmtpRulesCleared = z.object({ cleared: z.number().int().min(0) });

const NullableTimestamp = z.union([Timestamp, z.null()]);

export const SmtpAttempts = z.object({
  attempts: z.array(
    z
      .object({
        at: Timestamp,
        began_at: NullableTimestamp.optional(),
        client_ip: z.string(),
        from: z.string(),
        to: z.string(),
        stage: z.enum(SMTP_ATTEMPT_STAGES as [string, ...string[]]) as z.ZodType<SmtpAttempt['stage']>,
        code: z.number().int().nullable(),
        enhanced_code: z.string().nullable(),
        text: z.string(),
        outcome: z.enum(SMTP_ATTEMPT_OUTCOMES as [string, ...string[]]) as z.ZodType<SmtpAttempt['outcome']>,
        rule: (z.enum(SMTP_RULE_KINDS as [string, ...string[]]) as z.ZodType<NonNullable<SmtpAttempt['rule']>>).nullish(),
        message_id: z.string().nullish(),
        subject: z.string().nullish(),
        stored_id: z.string().nullish(),
        provider: (z.enum(PROVIDER_NAMES as [string, ...string[]]) as z.ZodType<ProviderName>).nullish(),
        user_agent: z.string().nullish(),
        retry_after_ms: z.number().nullish(),
      })
      .transform((a): SmtpAttempt =>
        Object.freeze({
          at: a.at,
          beganAt: a.began_at ?? null,
          clientIp: a.client_ip,
          from: a.from,
          to: a.to,
          stage: a.stage,
          code: a.code,
          enhancedCode: a.enhanced_code,
          text: a.text,
          outcome: a.outcome,
          rule: a.rule ?? null,
          messageId: a.message_id ?? null,
          subject: a.subject ?? null,
          storedId: a.stored_id ?? null,
          provider: a.provider ?? null,
          userAgent: a.user_agent ?? null,
          retryAfterMs: a.retry_after_ms ?? null,
        }),
      ),
  ),
});
