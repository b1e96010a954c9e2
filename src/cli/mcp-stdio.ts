// `mailroom mcp`: the four MCP tools over stdio, for agents configured with a
// command rather than a URL, in front of any service that speaks the mailbox
// HTTP API (the embedded server or a hosted one of the same shape).
//
// `wait_for_message` is the client's own wait: an inbox whose watermark is
// `since_id`, and `expectMail` with the filters. So the seed's loop runs here
// (deadline, pacing, Retry-After, the watermark walk), the service's long-poll
// is used when it advertises one, and polling is the fallback.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MailroomClient } from '../client/client.js';
import { MailroomApiError, MailroomError, MailTimeoutError } from '../client/errors.js';
import { createInbox } from '../inbox/inbox.js';
import type { MessageDetail } from '../inbox/mail.js';
import type { WireMessage, WireSummary } from '../server/mailbox-reader.js';
import { registerMailTools, type MailTools } from '../mcp/tools.js';
import { Refusal } from '../contract/refusal.js';
import { packageVersion } from '../contract/package-version.js';
import { WaitSlots } from '../server/waits/hold-for-mail.js';
import type { MailSummary } from '../client/messages.js';

/** As many waits as the contract allows one server, no queue. */
const PROXY_WAIT_SLOTS = 8;

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
    const headers: Record<string, string> = error.retryAfterMs === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) };
    return new Refusal(error.status, error.slug, error.serverMessage ?? error.message, headers);
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
export function createProxyTools(client: MailroomClient, slots = new WaitSlots(PROXY_WAIT_SLOTS)): MailTools {
  return {
    listMessages: (address, limit, signal) =>
      refused(async () => {
        const listing = await client.listMessages(address, { limit, signal });
        return { address: listing.address, messages: listing.messages.map(wireSummary) };
      }),
    getMessage: (address, id, signal) => refused(async () => wireMessage(await client.getMessage(address, id, { signal }))),
    deleteMessage: (address, id, signal) => refused(async () => ({ deleted: await client.deleteMessage(address, id, { signal }) })),
    async waitForMessage(args, signal) {
      const release = slots.tryTake();
      if (!release) {
        throw new Refusal(503, 'too_many_waits', `Too many waits are in progress: all ${slots.capacity} wait slots are taken, and waits are not queued. List the mailbox with list_messages and carry on, or call wait_for_message again in a little while`);
      }
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
  const server = new McpServer(
    { name: 'mailroom', version: packageVersion() },
    {
      instructions: `Disposable-inbox mail at ${client.apiURL}. To get an email your action causes: note the id of the newest message already there (list_messages), act, then call wait_for_message with since_id set to that id. A wait holds for at most 25 s; a timed-out answer is normal - call again to keep waiting.`,
    },
  );
  registerMailTools(server, createProxyTools(client));
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
