// The JSON bodies of the contract (docs/CONTRACT.md), as they travel. The
// server writes these; the client checks them at its edge and turns them
// into its own camel-cased shapes.
import type { SmtpAttemptOutcome, SmtpAttemptStage, SmtpRuleKind, SmtpRuleStage } from './smtp-lab.js';
import type { ProviderName } from './providers.js';

/** A list entry, as `GET /api/v1/mailbox` shows it. */
export interface WireSummary {
  readonly id: string;
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  /** At most 100 characters of the text: never the whole body. */
  readonly preview: string;
  /** RFC 3339. */
  readonly received_at: string;
  readonly size: number;
}

export interface WireAttachment {
  readonly filename: string | null;
  readonly content_type: string;
  readonly size: number;
  readonly content_id: string | null;
}

/** A full message, as `GET /api/v1/message/{id}` shows it. */
export interface WireMessage extends WireSummary {
  readonly message_id: string | null;
  readonly cc: readonly string[];
  readonly date: string | null;
  /** Lower-cased header name to its values, unfolded. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly text: string | null;
  readonly html: string | null;
  readonly attachments: readonly WireAttachment[];
}

/** `GET /api/v1/mailbox`: newest first. */
export interface WireListing {
  readonly address: string;
  readonly messages: readonly WireSummary[];
  /**
   * (embedded server, optional) Mail this mailbox lost to the server's global
   * message cap: how many, and the id of the newest one. Present only when
   * the cap evicted some; a wait that finds nothing says so.
   */
  readonly evicted?: WireEvicted;
}

export interface WireEvicted {
  readonly count: number;
  readonly newest_id: string;
}

/** `GET /api/v1/mailbox/wait`: the listing at the moment of the answer. */
export interface WireWaitAnswer extends WireListing {
  /** True when the timeout ended the wait, not arriving mail. */
  readonly timed_out: boolean;
  readonly waited_seconds: number;
}

/** `GET /healthz`: up, the domains served, and what is offered beyond the contract's calls. */
export interface WireHealth {
  readonly ok: boolean;
  /** The domains whose addresses can receive mail here (optional: a service may not say); with `catch_all`, the ones fresh addresses are made on. */
  readonly domains?: readonly string[];
  /** Every domain's mail is taken (the embedded server's default): an address on any domain can receive mail. */
  readonly catch_all?: boolean;
  /**
   * `wait`: the long-poll's path; `mcp`: the MCP endpoint's; `paging`: the
   * list's paging parameter (`before_id`); `smtp_rules` and `smtp_attempts`:
   * the SMTP deferral lab's paths (embedded server); `ui`, `mailboxes` and
   * `events`: the web UI and its calls (embedded server); `webhooks` and
   * `metrics`: the webhooks' registrations and the Prometheus metrics
   * (embedded server); `smtp_tls`: SMTP over TLS as offered (embedded
   * server, present only when TLS is on); `providers`: the email providers
   * whose send APIs the server answers (embedded server, docs/providers.md).
   */
  readonly features: {
    readonly wait?: string;
    readonly mcp?: string;
    readonly paging?: string;
    readonly smtp_rules?: string;
    readonly smtp_attempts?: string;
    readonly webhooks?: string;
    readonly metrics?: string;
    readonly ui?: string;
    readonly mailboxes?: string;
    readonly events?: string;
    readonly smtp_tls?: WireSmtpTls;
    readonly providers?: readonly string[];
  };
}

/** SMTP over TLS as the embedded server offers it (`/healthz` `features.smtp_tls`). */
export interface WireSmtpTls {
  /** STARTTLS is offered on the SMTP port. */
  readonly starttls: boolean;
  /** MAIL FROM is refused before STARTTLS (`530 5.7.0`). */
  readonly required: boolean;
  /** The implicit-TLS port, when one is open. */
  readonly smtps_port?: number;
}

/** `GET /api/v1/mailboxes`: mailboxes holding mail, newest arrival first (embedded server). */
export interface WireMailboxes {
  /**
   * How many mailboxes matched, before `limit`: every mailbox holding mail,
   * or with `contains` the matches among the mailboxes searched (all of them
   * from the cursor on, unless `partial`).
   */
  readonly total: number;
  readonly mailboxes: readonly WireMailboxEntry[];
  /** Present when there is more: pass it as `cursor` for the next page. */
  readonly next_cursor?: string;
  /** Present (true) when a `contains` search stopped at its window before the end of the index: `total` counts only what it saw. */
  readonly partial?: true;
}

export interface WireMailboxEntry {
  /** The mailbox key: the address, lower-cased. */
  readonly address: string;
  readonly count: number;
  readonly newest: WireSummary;
}

/** One event of `GET /api/v1/events` (its `data`, as JSON; the SSE `event` field is `type`). */
export interface WireMailEvent {
  readonly type: 'arrived' | 'removed';
  readonly address: string;
  readonly id: string;
  /** On an arrival: the message as the list shows it. */
  readonly summary?: WireSummary;
}

/**
 * A rule as `POST /api/v1/mailbox/rules` takes it: `kind` and that kind's
 * fields, snake_case, durations in ms. Fields left out take the server's
 * defaults, which the stored rule (`WireSmtpRule`) shows.
 */
export type WireSmtpRuleInput =
  | { readonly kind: 'greylist'; readonly min_delay_ms?: number; readonly reset_on_early_retry?: boolean }
  | { readonly kind: 'throttle'; readonly limit: number; readonly per_ms?: number }
  | {
      readonly kind: 'defer' | 'reject';
      readonly code?: number;
      readonly enhanced_code?: string;
      readonly text?: string;
      readonly stage?: SmtpRuleStage;
      readonly times?: number;
    }
  | { readonly kind: 'slow'; readonly delay_ms: number; readonly stage?: SmtpRuleStage; readonly times?: number | null }
  | { readonly kind: 'disconnect'; readonly stage?: SmtpRuleStage; readonly times?: number }
  | { readonly kind: 'rate_limit'; readonly retry_after_ms?: number; readonly stage?: SmtpRuleStage; readonly times?: number }
  | { readonly kind: 'unavailable'; readonly status?: number; readonly stage?: SmtpRuleStage; readonly times?: number };

/** A stored rule: every field filled in, with its id, when it was set and how many times it has left (`null`: until cleared). */
export type WireSmtpRule = {
  readonly id: string;
  readonly set_at: string;
  readonly remaining: number | null;
} & (
  | { readonly kind: 'greylist'; readonly min_delay_ms: number; readonly reset_on_early_retry: boolean }
  | { readonly kind: 'throttle'; readonly limit: number; readonly per_ms: number }
  | {
      readonly kind: 'defer' | 'reject';
      readonly code: number;
      readonly enhanced_code: string;
      readonly text: string | null;
      readonly stage: SmtpRuleStage;
      readonly times: number;
    }
  | { readonly kind: 'slow'; readonly delay_ms: number; readonly stage: SmtpRuleStage; readonly times: number | null }
  | { readonly kind: 'disconnect'; readonly stage: SmtpRuleStage; readonly times: number }
  | { readonly kind: 'rate_limit'; readonly retry_after_ms: number; readonly stage: SmtpRuleStage; readonly times: number }
  | { readonly kind: 'unavailable'; readonly status: number; readonly stage: SmtpRuleStage; readonly times: number }
);

/** `GET|POST /api/v1/mailbox/rules`: the address's rules in the order they act. */
export interface WireSmtpRules {
  readonly address: string;
  readonly rules: readonly WireSmtpRule[];
}

/** `POST /api/v1/mailbox/rules`: the rule as stored, and all of the address's rules. */
export interface WireSmtpRuleAdded extends WireSmtpRules {
  readonly rule: WireSmtpRule;
}

/** One SMTP attempt that named the address as a recipient, as the attempt log shows it. */
export interface WireSmtpAttempt {
  /** When the reply was decided (RFC 3339, ms). */
  readonly at: string;
  /**
   * When the sender began this transaction (its connection opened, or its
   * MAIL FROM on a connection already used): a retry begins after the reply
   * it answers. Null when not known.
   */
  readonly began_at: string | null;
  readonly client_ip: string;
  /** MAIL FROM, `""` for the null sender. */
  readonly from: string;
  readonly to: string;
  readonly stage: SmtpAttemptStage;
  /** Null when the connection dropped without a reply. */
  readonly code: number | null;
  readonly enhanced_code: string | null;
  readonly text: string;
  readonly outcome: SmtpAttemptOutcome;
  /** The rule that decided the reply, or null for the server's own. */
  readonly rule: SmtpRuleKind | null;
  /** The sender's Message-ID header, once DATA was received (null at RCPT). */
  readonly message_id: string | null;
  /** The mail's Subject, once DATA was received (null at RCPT). */
  readonly subject: string | null;
  /** The stored message's id, for an accepted attempt. */
  readonly stored_id: string | null;
  /** For a provider API call (stage `api`): the provider; null for SMTP. */
  readonly provider: ProviderName | null;
  /** For a provider API call: the client's User-Agent (which SDK). */
  readonly user_agent: string | null;
  /** When the sender was told to come back, in ms after the reply (`Retry-After`, a greylist's window); null when not said. */
  readonly retry_after_ms: number | null;
}

/** `GET /api/v1/mailbox/attempts`: oldest first. */
export interface WireSmtpAttempts {
  readonly address: string;
  readonly attempts: readonly WireSmtpAttempt[];
}

/** Every refusal's body; the slug is what callers branch on. */
export interface WireRefusal {
  readonly error: string;
  readonly message: string;
}
