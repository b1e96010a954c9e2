// `mailroom mcp`: the built bin as a child process speaking MCP over stdio
// (the SDK's own stdio client), in front of the embedded server's HTTP API.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { call, freshAddress, sendMail, start } from '../server/helpers.js';
import { until } from '../server/wait-helpers.js';

const BIN = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const clients: Client[] = [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function proxyTo(server: MailroomServer): Promise<Client> {
  const client = new Client({ name: 'mailroom-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--api-url', server.apiURL], stderr: 'ignore' }));
  clients.push(client);
  return client;
}

type Structured = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('mailroom mcp (stdio)', () => {
  it('serves the four tools in front of the HTTP API; wait_for_message holds until the mail arrives', async () => {
    const server = await start();
    const client = await proxyTo(server);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['delete_message', 'get_message', 'list_messages', 'wait_for_message']);

    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Old code', text: 'code 111' });
    const listed = await client.callTool({ name: 'list_messages', arguments: { address } });
    const [old] = (listed.structuredContent as Structured).messages;
    expect(old.subject).toBe('Old code');

    const waiting = client.callTool({ name: 'wait_for_message', arguments: { address, subject_contains: 'code', since_id: old.id, timeout_seconds: 20 } });
    await until(() => server.stats(address).wait >= 1 || server.stats(address).list >= 2, 'the proxy is waiting');
    await sendMail(server, { to: address, subject: 'New code', text: 'code 222' });
    const result = await waiting;
    expect(result.isError).toBeUndefined();
    const facts = result.structuredContent as Structured;
    expect(facts.timed_out).toBe(false);
    expect(facts.message.subject).toBe('New code');
    expect(facts.message.text).toContain('code 222');
    // the same message the HTTP API shows
    const http = (await call(server, `/api/v1/message/${facts.message.id}?mailbox=${encodeURIComponent(address)}`)).json;
    expect(facts.message).toEqual(http);

    const deleted = await client.callTool({ name: 'delete_message', arguments: { address, id: facts.message.id } });
    expect(deleted.structuredContent).toEqual({ deleted: true });
    expect((await call(server, `/api/v1/message/${facts.message.id}?mailbox=${encodeURIComponent(address)}`)).status).toBe(404);
  });

  it('times out as an answer, and refuses addresses with the service slugs', async () => {
    const server = await start();
    const client = await proxyTo(server);
    const quiet = await client.callTool({ name: 'wait_for_message', arguments: { address: freshAddress(), timeout_seconds: 1 } });
    expect(quiet.isError).toBeUndefined();
    expect(quiet.structuredContent).toMatchObject({ timed_out: true });
    expect((quiet.structuredContent as Structured).waited_seconds).toBeGreaterThanOrEqual(0.9);

    for (const [address, slug] of [
      ['not an address', 'invalid_address'],
      ['someone@elsewhere.test', 'unknown_domain'],
    ] as const) {
      const result = await client.callTool({ name: 'wait_for_message', arguments: { address, timeout_seconds: 5 } });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: slug });
    }
    const listed = await client.callTool({ name: 'list_messages', arguments: { address: 'someone@elsewhere.test' } });
    expect(listed.structuredContent).toMatchObject({ error: 'unknown_domain' });
  });
});
