// A mailbox and a message as MCP resources, for clients that let a person
// attach them to a conversation (`mailroom://mailbox/{address}`,
// `mailroom://message/{address}/{id}`). They read as the tools answer
// (list_messages' and get_message's text, links and codes included) and draw
// on the same budgets; agents that act should use the tools, which wait.
import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { Refusal } from '../contract/refusal.js';
import { readMessage } from './message-reading.js';
import { listingText, messageText, type MailTools } from './tools.js';

/** A template variable as one string (the SDK hands a list for an exploded variable). */
function one(value: string | string[] | undefined): string {
  return decodeURIComponent(Array.isArray(value) ? (value[0] ?? '') : (value ?? ''));
}

async function read(uri: URL, work: () => Promise<string>): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: await work() }] };
  } catch (error) {
    // A resource read has no tool-error shape: the refusal is a JSON-RPC error that keeps its slug.
    if (error instanceof Refusal) throw new McpError(ErrorCode.InvalidParams, `${error.slug}: ${error.message}`, { error: error.slug });
    throw error;
  }
}

export function registerMailResources(server: McpServer, tools: MailTools): void {
  server.registerResource(
    'mailbox',
    new ResourceTemplate('mailroom://mailbox/{address}', { list: undefined }),
    { title: 'A mailbox', description: 'The newest messages of one address, newest first (as list_messages shows them).', mimeType: 'text/plain' },
    (uri, variables, extra) =>
      read(uri, async () => {
        const address = one(variables.address);
        return listingText(address, await tools.listMessages(address, undefined, extra.signal));
      }),
  );
  server.registerResource(
    'message',
    new ResourceTemplate('mailroom://message/{address}/{id}', { list: undefined }),
    { title: 'A message', description: 'One message in full, with its links and one-time codes (as get_message shows it).', mimeType: 'text/plain' },
    (uri, variables, extra) => read(uri, async () => messageText(readMessage(await tools.getMessage(one(variables.address), one(variables.id), extra.signal)))),
  );
}
