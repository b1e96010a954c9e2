// One MCP server for both doors: the embedded server's `POST /mcp` and
// `mailroom mcp` on stdio register the same tools and tell an agent the same
// things, whatever backend answers them.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { packageVersion } from '../contract/package-version.js';
import { registerAgentTools } from './agent-tools.js';
import { registerFlowPrompts } from './prompts.js';
import { registerMailResources } from './resources.js';
import { registerSmtpLabTools } from './smtp-lab-tools.js';
import { registerMailTools, type MailTools } from './tools.js';

/** Where the mail is: the served domains when known (the embedded server), else the service's URL. */
export type McpServiceDescription = { readonly domains: readonly string[] } | { readonly apiURL: string };

/** What an agent is told about the lab's tools, when they are offered. */
export const SMTP_LAB_INSTRUCTIONS =
  "To test how an app handles a struggling mail server: set_smtp_rule makes this server greylist, throttle, defer, reject, slow down or drop mail to one address, and list_smtp_attempts shows every SMTP attempt at the address with its reply, grouped into the sender's mails and retries; clear_smtp_rules ends it.";

/** What the server tells an agent once, at `initialize`. */
export function mcpInstructions(service: McpServiceDescription, maxWaitSeconds: number, smtpLab = false): string {
  const where = 'domains' in service ? `any address at ${service.domains.join(', ')}` : `any address the mail service at ${service.apiURL} serves`;
  return [
    `A disposable-inbox mail service. Mail sent to ${where} lands in that address's mailbox; there is nothing to create first.`,
    'To get an email your action causes: call fresh_address for an address of your own (it returns its since_id), use it in the app, then call wait_for_message with that address and since_id. With an address you already use: note the id of the newest message there (list_messages), act, then wait with since_id set to that id.',
    'Every message a tool returns lists its links (with the words on them) and its likely one-time code, read from both the text and the HTML part: use those rather than reading codes out of the HTML.',
    `A wait holds for at most ${maxWaitSeconds} s; a timed-out answer is normal - call again to keep waiting.`,
    ...(smtpLab ? [SMTP_LAB_INSTRUCTIONS] : []),
  ].join(' ');
}

export function createMcpServer(tools: MailTools, service: McpServiceDescription): McpServer {
  const instructions = mcpInstructions(service, tools.maxWaitSeconds, tools.smtpLab !== undefined);
  const server = new McpServer({ name: 'mailroom', version: packageVersion() }, { instructions });
  registerMailTools(server, tools);
  registerAgentTools(server, tools);
  registerFlowPrompts(server);
  registerMailResources(server, tools);
  if (tools.smtpLab) registerSmtpLabTools(server, tools.smtpLab);
  return server;
}
