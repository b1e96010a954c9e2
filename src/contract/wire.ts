// The JSON bodies of the contract (docs/CONTRACT.md), as they travel. The
// server writes these; the client checks them at its edge and turns them
// into its own camel-cased shapes.

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
  /** The domains whose addresses can receive mail here (optional: a service may not say). */
  readonly domains?: readonly string[];
  /** `wait`: the long-poll's path; `mcp`: the MCP endpoint's; `paging`: the list's paging parameter (`before_id`). */
  readonly features: { readonly wait?: string; readonly mcp?: string; readonly paging?: string };
}

/** Every refusal's body; the slug is what callers branch on. */
export interface WireRefusal {
  readonly error: string;
  readonly message: string;
}
