// The tools an agent testing a signup flow needs beside the mailbox calls:
// `fresh_address` (an address no other agent can pick, with its watermark,
// so the next wait sees only what the agent's own action sends) and
// `get_attachment` (one attachment's content). They use the same backend
// calls on both doors (tools.ts, `MailTools`).
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { isDomainName } from '../contract/address.js';
import { DEFAULT_DOMAIN } from '../contract/defaults.js';
import { freshAddress, MAX_PREFIX_LENGTH } from '../contract/fresh-address.js';
import { MCP_MAX_ATTACHMENT_BYTES } from '../contract/limits.js';
import { Refusal } from '../contract/refusal.js';
import { readAttachment } from './attachment.js';
import { address, answer, messageId, structured, type MailTools } from './tools.js';

/** The domain a fresh address is made on: the one asked for when it is served, else the first served one. */
async function chooseDomain(tools: MailTools, asked: string | undefined, signal: AbortSignal): Promise<string> {
  const { domains, anyDomain } = await tools.addressDomains(signal);
  if (asked === undefined) return domains[0] ?? DEFAULT_DOMAIN;
  const domain = asked.trim().toLowerCase();
  if (!isDomainName(domain)) throw new Refusal(400, 'invalid_request', `${JSON.stringify(asked)} is not a domain name like "${DEFAULT_DOMAIN}"`);
  if (!anyDomain && !domains.includes(domain)) {
    throw new Refusal(404, 'unknown_domain', `This server does not receive mail for ${domain}; it serves ${domains.join(', ')}`);
  }
  return domain;
}

export function registerAgentTools(server: McpServer, tools: MailTools): void {
  server.registerTool(
    'fresh_address',
    {
      title: 'Get a fresh email address',
      description:
        'Makes a new, readable email address no one else has used (the label you give, then 80 random bits: two agents never get the same one), on a domain this server receives mail for, ' +
        'and reads its watermark. Type it into the form you are testing, then call wait_for_message with this `address` and, when it is not null, the `since_id` returned here: the wait then sees only mail sent after this call.',
      inputSchema: {
        label: z
          .string()
          .optional()
          .describe(
            `A readable start for the address, e.g. "signup" or "password reset" (lower-cased, cut to ${MAX_PREFIX_LENGTH} characters). Default "inbox".`,
          ),
        domain: z.string().optional().describe('The domain to make it on; default the first domain this server serves.'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const domain = await chooseDomain(tools, args.domain, extra.signal);
        const made = freshAddress({ prefix: args.label, domain });
        const sinceId = await tools.newestId(made, extra.signal);
        const next =
          sinceId === null
            ? `call wait_for_message with address=${made} (the mailbox is empty, so every message to it counts as new)`
            : `call wait_for_message with address=${made} and since_id=${sinceId}`;
        return {
          content: [{ type: 'text', text: `Fresh address: ${made}\nUse it where the app asks for an email, then ${next}.` }],
          structuredContent: structured({ address: made, domain, since_id: sinceId }),
        };
      }),
  );

  server.registerTool(
    'get_attachment',
    {
      title: 'Read an attachment',
      description:
        "Returns one attachment of a message, named by `index` (its position in the message's `attachments`, from 0) or `filename`: its text when it is UTF-8 text (text/*, JSON, XML, CSV), else its bytes as base64. " +
        `Attachments over ${MCP_MAX_ATTACHMENT_BYTES} bytes are refused (too_large).`,
      inputSchema: {
        address,
        id: messageId,
        index: z.number().int().min(0).optional().describe("The attachment's position in the message's `attachments`, from 0."),
        filename: z.string().optional().describe("The attachment's file name, as `attachments` lists it (the first with that name)."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args, extra) =>
      answer(async () => {
        const source = await tools.rawMessage(args.address, args.id, extra.signal);
        const found = await readAttachment(source, args);
        const head = `Attachment ${found.index} of message ${args.id}: ${found.filename ?? '(unnamed)'} (${found.content_type}, ${found.size} bytes)`;
        const body =
          found.encoding === 'text' ? `${head}, as text:\n\n${found.text}` : `${head}, not text: its bytes are in the structured content, field \`base64\`.`;
        return { content: [{ type: 'text', text: body }], structuredContent: structured(found) };
      }),
  );
}
