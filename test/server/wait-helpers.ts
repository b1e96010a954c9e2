// Helpers for the server-side wait tests: an MCP client from the official SDK
// and raw JSON-RPC posts through undici, both over real sockets.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { afterEach, vi } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { internalsOf } from '../../src/server/start-server.js';

const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

/** The SDK's own client over streamable HTTP, initialized, closed after the test. */
export async function connectMcp(server: MailroomServer, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mailroom-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.apiURL}/mcp`), { requestInit: { headers } });
  await client.connect(transport);
  clients.push(client);
  return client;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** A POST to /mcp with exactly the given headers and body, as curl would send it. */
export async function postMcp(server: MailroomServer, body: string, headers: Record<string, string>, signal?: AbortSignal): Promise<RawAnswer> {
  const response = await request(`${server.apiURL}/mcp`, { method: 'POST', headers, body, signal });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export function toolCall(name: string, args: Record<string, unknown>, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/** Resolves once `condition()` holds (checked every 5 ms); rejects naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`Timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** How many long-poll and MCP wait slots are taken right now. */
export function slotsInUse(server: MailroomServer): { longPoll: number; mcp: number } {
  const internals = internalsOf(server);
  return { longPoll: internals.waitSlots?.inUse ?? 0, mcp: internals.mcpSlots.inUse };
}

export function waitPath(params: Record<string, string | number>): string {
  return `/api/v1/mailbox/wait?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;
}

/**
 * Counts the server's looks at a mailbox (`store.newerThan`) from now on. A
 * hold looks once when it starts; an arrival that wakes it looks only at the
 * new message, not at the mailbox. So a hold answered by the arrival itself
 * shows one look, and a hold that polled the store (on any timer) shows at
 * least two: the one that found nothing and the one that found the mail.
 * Without a mailbox: the looks at every mailbox.
 */
export function countLooks(server: MailroomServer): (mailbox?: string) => number {
  const looks = vi.spyOn(internalsOf(server).store, 'newerThan');
  return (mailbox) => looks.mock.calls.filter(([looked]) => mailbox === undefined || looked === mailbox).length;
}
