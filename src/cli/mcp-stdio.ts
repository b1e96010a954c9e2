// `mailroom mcp`: the four MCP tools over stdio, for agents configured with a
// command rather than a URL, in front of any service that speaks the mailbox
// HTTP API (the embedded server or a hosted one of the same shape).
//
// `wait_for_message` is the client's own wait: an inbox whose watermark is
// `since_id`, and `expectMail` with the filters. So the client's loop runs here
// (deadline, pacing, Retry-After, the watermark walk), the service's long-poll
// is used when it advertises one, and polling is the fallback.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MailroomClient } from '../client/client.js';
import { MailroomApiError, MailroomError } from '../client/errors.js';
import type { MailSummary, MessageDetail } from '../client/messages.js';
import { MAX_WAIT_SECONDS, MCP_WAIT_SLOTS } from '../contract/limits.js';
import { Refusal, type RefusalSlug } from '../contract/refusal.js';
import { WaitSlots } from '../contract/wait-slots.js';
import type { WireMessage, WireSummary } from '../contract/wire.js';
import { createInbox } from '../inbox/inbox.js';
import { MailTimeoutError } from '../inbox/wait-errors.js';
import { createMcpServer } from '../mcp/mcp-server.js';
import { WHEN_SLOTS_ARE_FULL, type MailTools } from '../mcp/tools.js';

function wireSummary(s: MailSummary): WireSummary {
  return { id: s.id, from: s.from, to: s.to, subject: s.subject, preview: s.preview, received_at: s.receivedAt.toISOString(), size: s.size };
}

function wireMessage(m: MessageDetail): WireMessage {
  return {
    ...wireSummary(m),
    message_id: m.messageId,
    cc: m.cc,
    date: m.date ? m.date.toISOString() : null,
    headers: m.headers,
    text: m.text === '' ? null : m.text,
    html: m.html === '' ? null : m.html,
    attachments: m.attachments.map((a) => ({ filename: a.filename, content_type: a.contentType, size: a.size, content_id: a.contentId })),
  };
}

/** The service's refusal as the tool's: same slug, its message, its Retry-After. */
function asRefusal(error: unknown): unknown {
  if (error instanceof MailroomApiError) {
    const headers: Record<string, string> =
      error.retryAfterMs === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) };
    // The service's own slug, passed through as the service chose it.
    return new Refusal(error.status, error.slug as RefusalSlug, error.serverMessage ?? error.message, headers);
  }
  if (error instanceof MailroomError) return new Refusal(502, 'unavailable', error.message);
  return error;
}

async function refused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asRefusal(error);
  }
}

/** The tools, answered by the service at `client`. */
export function createProxyTools(client: MailroomClient, slots = new WaitSlots(MCP_WAIT_SLOTS)): MailTools {
  return {
    maxWaitSeconds: MAX_WAIT_SECONDS,
    listMessages: (address, limit, signal) =>
      refused(async () => {
        const listing = await client.listMessages(address, { limit, signal });
        return { address: listing.address, messages: listing.messages.map(wireSummary) };
      }),
    getMessage: (address, id, signal) => refused(async () => wireMessage(await client.getMessage(address, id, { signal }))),
    deleteMessage: (address, id, signal) => refused(async () => ({ deleted: await client.deleteMessage(address, id, { signal }) })),
    async waitForMessage(args, signal) {
      const release = slots.take(WHEN_SLOTS_ARE_FULL);
      const started = performance.now();
      const waited = () => Math.round(performance.now() - started) / 1000;
      try {
        const inbox = await refused(async () => {
          try {
            return await createInbox({ client, address: args.address, watermark: args.since_id || null, signal });
          } catch (error) {
            // The inbox checks the address before asking anything: the service's slug for it.
            if (error instanceof TypeError && /`address`/.test(error.message)) {
              throw new Refusal(400, 'invalid_address', `${JSON.stringify(args.address)} is not a well-formed email address, so it can never receive mail`);
            }
            throw error;
          }
        });
        const filter = {
          ...(args.from_contains ? { from: args.from_contains } : {}),
          ...(args.subject_contains ? { subject: args.subject_contains } : {}),
        };
        try {
          const mail = await inbox.expectMail(filter, { timeout: args.timeout_seconds * 1000, signal });
          return { timed_out: false, waited_seconds: waited(), message: wireMessage(mail) };
        } catch (error) {
          if (error instanceof MailTimeoutError && !error.cutShort) return { timed_out: true, waited_seconds: waited() };
          throw asRefusal(error);
        }
      } finally {
        release();
      }
    },
  };
}

export interface StdioProxyOptions {
  readonly apiURL: string;
  readonly token?: string | undefined;
}

/** Serves the tools on stdin/stdout until stdin closes. */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const client = new MailroomClient({ apiURL: options.apiURL, token: options.token });
  const server = createMcpServer(createProxyTools(client), { apiURL: client.apiURL });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
