// The client's own shapes of what the service returns: camel-cased, dates as
// `Date`, checked at the edge (wire-schemas.ts) so nothing above it meets a
// raw wire body.

/** One entry of a mailbox listing: enough to filter on, not the body. */
export interface MailSummary {
  /** The service's id: scoped to one mailbox, gone when the message is. */
  readonly id: string;
  readonly from: string;
  /** The To header's addresses (a Bcc'd copy lands without being listed). */
  readonly to: readonly string[];
  readonly subject: string;
  /** A short text excerpt, NOT the body: fetch the message to read it. */
  readonly preview: string;
  readonly receivedAt: Date;
  readonly size: number;
}

export interface MailAttachment {
  readonly filename: string | null;
  readonly contentType: string;
  readonly size: number;
  readonly contentId: string | null;
}

/** The full message as the service returns it, in the core's own shape. */
export interface MessageDetail extends MailSummary {
  /** The sender's Message-ID header (not the service's `id`). */
  readonly messageId: string | null;
  readonly cc: readonly string[];
  /** The Date header, when it parses. */
  readonly date: Date | null;
  /** Header name (lowercase) to its values, in order. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  /** The plain-text part, or '' when there is none. */
  readonly text: string;
  /** The HTML part, or '' when there is none. */
  readonly html: string;
  readonly attachments: readonly MailAttachment[];
}

/** What a service advertises beyond the contract's calls (`GET /healthz` → `features`). */
export interface ServiceFeatures {
  /** The path of the long-poll (`GET /api/v1/mailbox/wait`), when the service offers one. */
  readonly wait: string | undefined;
  /** The domains the service receives mail for, when it says (`domains` in `/healthz`); undefined when it takes every domain's (`catch_all`). */
  readonly domains: readonly string[] | undefined;
  /** The list pages older than an id (`before_id`, advertised as `features.paging`). */
  readonly paging: boolean;
  /** The SMTP deferral lab's rules path (`features.smtp_rules`), when the service offers it. */
  readonly smtpRules: string | undefined;
  /** Its attempt log's path (`features.smtp_attempts`). */
  readonly smtpAttempts: string | undefined;
  /** The webhooks' registrations path (`features.webhooks`), when the service offers them. */
  readonly webhooks: string | undefined;
  /** The mailbox index's path (`features.mailboxes`): the mailboxes holding mail, the latest to get some first. */
  readonly mailboxes: string | undefined;
}

/** One mailbox of the index (`GET /api/v1/mailboxes`). */
export interface MailboxIndexEntry {
  readonly address: string;
  /** How many messages it holds. */
  readonly count: number;
  /** Its newest message. */
  readonly newest: MailSummary;
}

/** The mailboxes that hold mail, the one whose newest message arrived last first. */
export interface MailboxIndex {
  /** How many matched, before `limit` (with `contains` and `partial`, only among those searched). */
  readonly total: number;
  readonly mailboxes: readonly MailboxIndexEntry[];
  /** True when a `contains` search stopped at its window (the 5,000 newest mailboxes) before the end of the index. */
  readonly partial: boolean;
}
