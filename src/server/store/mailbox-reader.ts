// What a caller sees of a mailbox, shared by the HTTP API, the long-poll and
// the MCP tools so the three can never disagree: the address check with its
// refusals, the summary, the full message.
import { parseMailboxAddress } from '../../contract/address.js';
import type { ParsedMail, ParsedSummary } from '../base/parsed-mail.js';
import type { WireEvicted, WireMessage, WireSummary } from '../../contract/wire.js';
import { Refusal } from '../../contract/refusal.js';
import type { MailStore } from './mail-store.js';
import type { StoredMessage } from '../base/stored-message.js';

export interface MailboxReader {
  /**
   * The mailbox key of an address given by a caller, or the refusal for it:
   * `invalid_request` when missing, `invalid_address`, `unknown_domain`
   * (only when the server does not catch all).
   * `name` is the parameter's name, for the message.
   */
  mailboxKey(value: string | undefined, name: string): string;
  /** The list's view of a message (parsed on first use, then kept). */
  summaryOf(message: StoredMessage): Promise<ParsedSummary>;
  /** Newest first, at most `limit`, as the list shows them; with `beforeId`, only older messages (a page). */
  listing(mailbox: string, limit: number, beforeId?: string): Promise<WireSummary[]>;
  /** The listing's `evicted` field: `{ evicted }` when the cap pushed mail of this mailbox out, else `{}`. */
  evictedField(mailbox: string): Promise<{ evicted?: WireEvicted }>;
  wireSummary(message: StoredMessage): Promise<WireSummary>;
  wireMessage(message: StoredMessage): Promise<WireMessage>;
}

/** What a message's views are made of: plain fields and its content (a delivery thread rebuilds one from the source). */
export type MessageFields = Pick<StoredMessage, 'id' | 'receivedAt' | 'size' | 'content'>;

const summaryOf = (message: MessageFields): Promise<ParsedSummary> =>
  message.content.summaryIfKnown ? Promise.resolve(message.content.summaryIfKnown) : message.content.summary();

const wire = (message: Omit<MessageFields, 'content'>, parsed: ParsedSummary): WireSummary => ({
  id: message.id,
  from: parsed.from,
  to: parsed.to,
  subject: parsed.subject,
  preview: parsed.preview,
  received_at: new Date(message.receivedAt).toISOString(),
  size: message.size,
});

/** The full message as `GET /api/v1/message/{id}` shows it; the webhooks' `message.received` carries the same. */
export async function wireMessageOf(message: MessageFields): Promise<WireMessage> {
  // The summary fields are the list's: the one it has already, or the full parse's, which the list's fast
  // path agrees with wherever it answers (fast-summary.ts, test/server/summary.test.ts). Parsed first, so
  // a message nobody has listed yet is read once, not also by the fast path.
  const parsed = await message.content.parsed();
  return wireMessageFrom(message, parsed, message.content.summaryIfKnown ?? parsed);
}

/** The full message from its parse, with the list's summary fields (`summary`: the list's, or the parse itself). */
export function wireMessageFrom(message: Omit<MessageFields, 'content'>, parsed: ParsedMail, summary: ParsedSummary = parsed): WireMessage {
  // Added to the summary's object rather than spread into a new one: see event-body.ts on spreads in the delivery path.
  return Object.assign(wire(message, summary), {
    message_id: parsed.messageId,
    cc: parsed.cc,
    date: parsed.date,
    headers: parsed.headers,
    text: parsed.text,
    html: parsed.html,
    attachments: parsed.attachments,
  });
}

/** `catchAll`: every domain's mail is taken, so any well-formed address is a mailbox; else only the served domains'. */
export function createMailboxReader(store: MailStore, domains: readonly string[], catchAll = false): MailboxReader {
  const served = new Set(domains);

  return {
    mailboxKey(value, name) {
      if (value === undefined)
        throw new Refusal(400, 'invalid_request', `Missing parameter \`${name}\` (the full address, e.g. ${name}=signup-42@${domains[0]})`);
      const parsed = parseMailboxAddress(value);
      if (!parsed) throw new Refusal(400, 'invalid_address', `${JSON.stringify(value)} is not a well-formed email address, so it can never receive mail`);
      if (!catchAll && !served.has(parsed.domain)) {
        throw new Refusal(404, 'unknown_domain', `This server does not serve the domain of ${value}; it serves ${domains.join(', ')}`);
      }
      return parsed.key;
    },
    summaryOf,
    async listing(mailbox, limit, beforeId) {
      const messages = await store.list(mailbox, limit, beforeId);
      const summaries = await Promise.all(messages.map(summaryOf));
      return messages.map((m, i) => wire(m, summaries[i]!));
    },
    async evictedField(mailbox) {
      const evicted = await store.evictedFrom(mailbox);
      return evicted ? { evicted: { count: evicted.count, newest_id: evicted.newestId } } : {};
    },
    async wireSummary(message) {
      return wire(message, await summaryOf(message));
    },
    wireMessage: wireMessageOf,
  };
}
