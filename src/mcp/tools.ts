// The MCP tools (docs/CONTRACT.md, "MCP endpoint"): `wait_for_message`, and
// `list_messages`, `get_message`, `delete_message` mirroring the HTTP calls.
// The SMTP deferral lab's tools are beside this file (smtp-lab-tools.ts),
// registered when the backend has the lab.
//
// The tools only translate: arguments in, a `MailTools` backend call, and an
// answer with human-readable text plus the same facts as structured content.
// The embedded server's backend reads its store (server/http/mcp/embedded-tools.ts);
// `mailroom mcp` proxies a mailbox HTTP API (cli/mcp-stdio.ts).
//
// No tool declares an `outputSchema`: a refusal is a tool error whose
// structured content is `{"error": slug, "message": text}`, and SDK clients
// validate even an error's structured content against a declared schema.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, MCP_WAIT_SLOTS } from '../contract/limits.js';
import { plural } from '../contract/format.js';
import { Refusal } from '../contract/refusal.js';
import type { WireListing, WireMessage, WireSmtpAttempts, WireSmtpRuleAdded, WireSmtpRules } from '../contract/wire.js';
import { linksAndCodesBlock, readableBody, readMessage, type ReadMessage } from './message-reading.js';

export interface WaitArguments {
  readonly address: string;
  readonly from_contains?: string | undefined;
  readonly subject_contains?: string | undefined;
  readonly since_id?: string | undefined;
  /** Already clamped to 0..`maxWaitSeconds`. */
  readonly timeout_seconds: number;
}

export type WaitAnswer =
  { readonly timed_out: false; readonly waited_seconds: number; readonly message: WireMessage } | { readonly timed_out: true; readonly waited_seconds: number };

/**
 * The SMTP deferral lab (docs/CONTRACT.md, "SMTP rules"), answered with the
 * HTTP API's bodies. The backend checks a rule with the same code as the
 * API's `POST` (the embedded server) or sends it there (the stdio proxy).
 */
export interface SmtpLabTools {
  /** `rule`: `kind` and that kind's fields as the caller gave them, unchecked (the backend refuses a bad one with `invalid_request`). */
  addRule(address: string, rule: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<WireSmtpRuleAdded>;
  rules(address: string, signal: AbortSignal): Promise<WireSmtpRules>;
  clearRules(address: string, signal: AbortSignal): Promise<{ cleared: number }>;
  attempts(address: string, signal: AbortSignal): Promise<WireSmtpAttempts>;
}

/** What the tools need; throws `Refusal` for every refusal (its slug becomes the tool error's). */
export interface MailTools {
  /** The longest this backend holds a wait, in seconds: the contract's 25, or less on a server started with a shorter `holdCap`. */
  readonly maxWaitSeconds: number;
  listMessages(address: string, limit: number | undefined, signal: AbortSignal): Promise<WireListing>;
  getMessage(address: string, id: string, signal: AbortSignal): Promise<WireMessage>;
  deleteMessage(address: string, id: string, signal: AbortSignal): Promise<{ deleted: boolean }>;
  waitForMessage(args: WaitArguments, signal: AbortSignal): Promise<WaitAnswer>;
  /** Where fresh addresses are made: the served domains, the first the default; `anyDomain` when every domain's mail is taken (catch-all). */
  addressDomains(signal: AbortSignal): Promise<{ readonly domains: readonly string[]; readonly anyDomain: boolean }>;
  /** The id of the newest message at `address` (its watermark), or null when the mailbox is empty. */
  newestId(address: string, signal: AbortSignal): Promise<string | null>;
  /** A message's source as received (the HTTP API's `raw` call). */
  rawMessage(address: string, id: string, signal: AbortSignal): Promise<Uint8Array>;
  /** The SMTP deferral lab, when the backend has it; its tools are offered only then. */
  readonly smtpLab?: SmtpLabTools | undefined;
}

export const address = z
  .string()
  .describe(
    'The full mailbox address, e.g. signup-42@mailroom.test. Mail to any address at a served domain lands in its mailbox; there is nothing to create first.',
  );
export const messageId = z.string().describe('A message id as list_messages or wait_for_message returned it (not the Message-ID header).');

export function structured(value: unknown): Record<string, unknown> {
  return value as Record<string, unknown>;
}

function refusalResult(refusal: Refusal): CallToolResult {
  const retryAfter = refusal.headers['retry-after'];
  const facts: Record<string, unknown> = { error: refusal.slug, message: refusal.message };
  if (retryAfter !== undefined) facts.retry_after_seconds = Number(retryAfter);
  return { content: [{ type: 'text', text: `${refusal.slug}: ${refusal.message}` }], structuredContent: facts, isError: true };
}

export async function answer(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Refusal) return refusalResult(error);
    throw error;
  }
}

function summaryLine(m: WireListing['messages'][number]): string {
  return `- ${m.id}  ${m.received_at}  from ${m.from || '(no sender)'}: ${JSON.stringify(m.subject)}${m.preview ? ` - ${m.preview}` : ''}`;
}

export function listingText(address: string, listing: WireListing): string {
  return listing.messages.length === 0
    ? `The mailbox ${address} is empty.`
    : `${plural(listing.messages.length, 'message')} at ${address}, newest first:\n${listing.messages.map(summaryLine).join('\n')}`;
}

export function messageText(m: ReadMessage): string {
  const lines = [
    `Message ${m.id}, received ${m.received_at}`,
    `From: ${m.from || '(no sender)'}`,
    `To: ${m.to.join(', ') || '(none)'}`,
    ...(m.cc.length > 0 ? [`Cc: ${m.cc.join(', ')}`] : []),
    `Subject: ${m.subject}`,
    ...(m.attachments.length > 0
      ? [`Attachments: ${m.attachments.map((a) => `${a.filename ?? '(unnamed)'} (${a.content_type}, ${a.size} bytes)`).join(', ')}`]
      : []),
    '',
    readableBody(m),
    '',
    linksAndCodesBlock(m),
  ];
  return lines.join('\n');
}

/** The filter in words, e.g. `subject containing "code"`; undefined when there is none. */
function describeContains(fromContains: string | undefined, subjectContains: string | undefined): string | undefined {
  const parts: string[] = [];
  if (fromContains !== undefined) parts.push(`sender containing ${JSON.stringify(fromContains)}`);
  if (subjectContains !== undefined) parts.push(`subject containing ${JSON.stringify(subjectContains)}`);
  return parts.length === 0 ? undefined : parts.join(' and ');
}

export function clampTimeout(seconds: number | undefined, maxWaitSeconds: number): number {
  return seconds === undefined ? maxWaitSeconds : Math.min(Math.max(0, seconds), maxWaitSeconds);
}

export function registerMailTools(server: McpServer, tools: MailTools): void {
  const { maxWaitSeconds } = tools;
  server.registerTool(
    'wait_for_message',
    {
      title: 'Wait for an email',
      description:
        `Waits on the server until a message matching the filters arrives at \`address\` and returns it (the oldest matching message newer than \`since_id\`), or says that it timed out. ` +
        `It holds for at most ${maxWaitSeconds} seconds (\`timeout_seconds\`, default ${maxWaitSeconds}; larger values are clamped). ` +
        'A timeout is an answer, not an error: call again to keep waiting. Pass `since_id` (the id of the newest message you already handled) so old mail does not count; ' +
        'without it every message in the mailbox counts as new and the call answers at once with what already matches. ' +
        `The server has ${MCP_WAIT_SLOTS} wait slots and no queue: when all are taken the call fails at once with too_many_waits; list the mailbox instead.`,
      inputSchema: {
        address,
        from_contains: z.string().optional().describe('Only messages whose sender (name or address) contains this text, case-insensitive.'),
        subject_contains: z.string().optional().describe('Only messages whose subject contains this text, case-insensitive.'),
        since_id: z.string().optional().describe('Only messages newer than this message id (the watermark). Omit to count every message in the mailbox.'),
        timeout_seconds: z.number().min(0).optional().describe(`How long to wait, in seconds; default and maximum ${maxWaitSeconds}.`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const timeout = clampTimeout(args.timeout_seconds, maxWaitSeconds);
        const result = await tools.waitForMessage({ ...args, timeout_seconds: timeout }, extra.signal);
        const filter = describeContains(args.from_contains, args.subject_contains);
        if (result.timed_out) {
          const after = args.since_id === undefined ? '' : ` newer than ${args.since_id}`;
          return {
            content: [
              {
                type: 'text',
                text:
                  `No message${filter ? ` with ${filter}` : ''}${after} arrived at ${args.address} within ${timeout} s (waited ${result.waited_seconds.toFixed(1)} s). ` +
                  'This is not an error: mail can take a while. Call wait_for_message again with the same arguments to keep waiting.',
              },
            ],
            structuredContent: structured(result),
          };
        }
        const m = readMessage(result.message);
        return {
          content: [
            {
              type: 'text',
              text: `${messageText(m)}\n\n(Arrived at ${args.address} after a wait of ${result.waited_seconds.toFixed(1)} s. To wait for the next one, call again with since_id=${m.id}.)`,
            },
          ],
          structuredContent: structured({ ...result, message: m }),
        };
      }),
  );

  server.registerTool(
    'list_messages',
    {
      title: 'List a mailbox',
      description:
        'Lists the newest messages of `address`, newest first (summaries with a short preview, not the body; use get_message for the body). Limited to one call per second per address, shared with wait_for_message.',
      inputSchema: {
        address,
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_LIST_LIMIT)
          .optional()
          .describe(`How many of the newest messages, 1 to ${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT}).`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const listing = await tools.listMessages(args.address, args.limit, extra.signal);
        return { content: [{ type: 'text', text: listingText(args.address, listing) }], structuredContent: structured(listing) };
      }),
  );

  server.registerTool(
    'get_message',
    {
      title: 'Read a message',
      description:
        'Returns one message of `address` in full: headers, text, HTML and attachment names, plus its links (with the words on them) and likely one-time codes, read out of both parts (`links`, `codes`; the likeliest code first).',
      inputSchema: { address, id: messageId },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const message = readMessage(await tools.getMessage(args.address, args.id, extra.signal));
        return { content: [{ type: 'text', text: messageText(message) }], structuredContent: structured(message) };
      }),
  );

  server.registerTool(
    'delete_message',
    {
      title: 'Delete a message',
      description: 'Deletes one message of `address`. Idempotent: deleting a message that is already gone answers deleted: false, not an error.',
      inputSchema: { address, id: messageId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const result = await tools.deleteMessage(args.address, args.id, extra.signal);
        const text = result.deleted
          ? `Deleted message ${args.id} from ${args.address}.`
          : `Message ${args.id} was not in ${args.address} (already deleted, expired, or never there); nothing to do.`;
        return { content: [{ type: 'text', text }], structuredContent: structured(result) };
      }),
  );
}
