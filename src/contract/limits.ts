// The numbers of the wire contract (docs/CONTRACT.md) that both halves rely on.

/** The list floor: one list call per second per address. */
export const LIST_INTERVAL_MS = 1000;
/** `limit` of a listing: 1..100, 25 when omitted. */
export const DEFAULT_LIST_LIMIT = 25;
export const MAX_LIST_LIMIT = 100;
/** The longest a server-side wait is held, in seconds: proxies kill longer requests. */
export const MAX_WAIT_SECONDS = 25;
/** Concurrent `wait_for_message` calls one MCP server holds, with no queue. */
export const MCP_WAIT_SLOTS = 8;
/**
 * The largest attachment the MCP `get_attachment` tool returns, in bytes
 * (before base64): an agent's context is the limit, not the server's memory.
 */
export const MCP_MAX_ATTACHMENT_BYTES = 1024 * 1024;
/**
 * What an agent is told to do when every MCP wait slot is taken
 * (`too_many_waits`). Here rather than beside the tools (mcp/tools.ts) so
 * the embedded server can refuse a wait without loading zod and the MCP SDK.
 */
export const MCP_WHEN_SLOTS_ARE_FULL = 'List the mailbox with list_messages and carry on, or call wait_for_message again in a little while';
