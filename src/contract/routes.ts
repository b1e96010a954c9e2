// Where each part of the contract (docs/CONTRACT.md) is served.

export const API_BASE = '/api/v1';
export const HEALTH_PATH = '/healthz';
/** The long-poll; a service advertises it as `features.wait` in `/healthz`. */
export const WAIT_PATH = `${API_BASE}/mailbox/wait`;
/** The MCP endpoint; advertised as `features.mcp`. */
export const MCP_PATH = '/mcp';
/**
 * The list's paging parameter (`GET /api/v1/mailbox?...&before_id=ID`: the
 * page older than ID); a service advertises it as `features.paging`.
 */
export const PAGING_PARAM = 'before_id';
/**
 * The SMTP deferral lab (an embedded-server extension): a mailbox's rules
 * (`GET|POST|DELETE ...?address=A`), advertised as `features.smtp_rules`,
 * and its attempt log (`GET ...?address=A`), as `features.smtp_attempts`.
 */
export const RULES_PATH = `${API_BASE}/mailbox/rules`;
export const ATTEMPTS_PATH = `${API_BASE}/mailbox/attempts`;
/**
 * The web UI's own calls (an embedded-server extension): the index of
 * mailboxes (`GET ...?limit=N&contains=S`), advertised as
 * `features.mailboxes`, and the change stream (`GET`, server-sent events),
 * as `features.events`. The UI itself is served at `features.ui` (`/`).
 */
export const MAILBOXES_PATH = `${API_BASE}/mailboxes`;
export const EVENTS_PATH = `${API_BASE}/events`;
export const UI_PATH = '/';
/** The UI's scripts and styles, served beside it. */
export const UI_ASSETS_PREFIX = '/ui/';
/**
 * Webhooks (an embedded-server extension): registrations at
 * `.../webhooks` and `.../webhooks/{id}`, each one's delivery log at
 * `.../{id}/deliveries` and dead letters at `.../{id}/dead-letters`;
 * advertised as `features.webhooks`.
 */
export const WEBHOOKS_PATH = `${API_BASE}/webhooks`;
/**
 * Provider delivery events (an embedded-server extension, with the
 * webhooks): `POST` a test's report for its address ("this address
 * bounced"); under it, SES's SNS signing certificate and subscription
 * confirmation (`.../ses/certificate.pem`, `.../ses/confirm`).
 */
export const PROVIDER_EVENTS_PATH = `${API_BASE}/provider-events`;
/** Prometheus metrics (text format); advertised as `features.metrics`. */
export const METRICS_PATH = '/metrics';
