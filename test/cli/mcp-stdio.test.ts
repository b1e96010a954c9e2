// `mailroom mcp`: the built bin as a child process speaking MCP over stdio
// (the SDK's own stdio client), in front of the embedded server's HTTP API:
// the mail tools, and the SMTP deferral lab's when the service offers it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { call, fakeClock, freshAddress, sendMail, start } from '../server/helpers.js';
import { freePort } from '../support/free-port.js';
import { until } from '../server/wait-helpers.js';

const BIN = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const clients: Client[] = [];

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function proxyTo(server: MailroomServer | string): Promise<Client> {
  const apiURL = typeof server === 'string' ? server : server.apiURL;
  const client = new Client({ name: 'mailroom-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--api-url', apiURL], stderr: 'ignore' }));
  clients.push(client);
  return client;
}

const MAIL_TOOLS = ['delete_message', 'fresh_address', 'get_attachment', 'get_message', 'list_messages', 'wait_for_message'];
const LAB_TOOLS = ['clear_smtp_rules', 'list_smtp_attempts', 'list_smtp_rules', 'set_smtp_rule'];

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name).sort();
}

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
}

const q = (address: string) => `?${new URLSearchParams({ address })}`;

type Structured = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('mailroom mcp (stdio)', () => {
  it('serves the mail tools in front of the HTTP API; wait_for_message holds until the mail arrives', async () => {
    const server = await start();
    const client = await proxyTo(server);
    expect((await toolNames(client)).filter((name) => !name.includes('smtp'))).toEqual(MAIL_TOOLS);

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
    expect(facts.message).toEqual({ ...http, links: [], codes: [] });

    const deleted = await client.callTool({ name: 'delete_message', arguments: { address, id: facts.message.id } });
    expect(deleted.structuredContent).toEqual({ deleted: true });
    expect((await call(server, `/api/v1/message/${facts.message.id}?mailbox=${encodeURIComponent(address)}`)).status).toBe(404);
  });

  it("serves the agent's tools and prompts the same way: fresh_address, links and codes, get_attachment", async () => {
    const server = await start();
    const client = await proxyTo(server);
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['check_no_mail_sent', 'follow_password_reset', 'verify_signup']);
    const fresh = await client.callTool({ name: 'fresh_address', arguments: { label: 'Sign up' } });
    const { address, since_id } = fresh.structuredContent as Structured;
    expect(address).toMatch(/^sign-up-[a-z2-7]{16}@mailroom\.test$/);
    expect(since_id).toBeNull();
    await sendMail(server, {
      to: address,
      subject: 'Confirm',
      html: '<p>Order #88231. Your code is <b>482913</b>.</p><a href="https://app.test/verify?t=1">Confirm my email</a>',
      attachments: [{ filename: 'terms.txt', content: 'the terms' }],
    });
    const result = await client.callTool({ name: 'wait_for_message', arguments: { address, timeout_seconds: 20 } });
    const message = (result.structuredContent as Structured).message;
    expect(message.codes).toEqual(['482913']);
    expect(message.links).toEqual([{ url: 'https://app.test/verify?t=1', text: 'Confirm my email' }]);
    expect(textOf(result)).toContain('One-time code: 482913');
    const attachment = await client.callTool({ name: 'get_attachment', arguments: { address, id: message.id, index: 0 } });
    expect(attachment.structuredContent).toMatchObject({ filename: 'terms.txt', encoding: 'text', text: 'the terms' });
  });

  it('times out as an answer, and refuses addresses with the service slugs', async () => {
    const server = await start({ catchAll: false });
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

describe('the SMTP deferral lab through mailroom mcp', () => {
  it('greylists through the service: 451 4.7.1, the retry after min_delay_ms accepted, and the log as the HTTP API shows it', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const client = await proxyTo(server);
    expect(await toolNames(client)).toEqual([...LAB_TOOLS, ...MAIL_TOOLS].sort());
    const to = freshAddress('stdio-grey');

    const set = await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, kind: 'greylist', min_delay_ms: 2000 } });
    expect(set.isError).toBeUndefined();
    const rules = (await call(server, `/api/v1/mailbox/rules${q(to)}`)).json.rules;
    expect(rules).toHaveLength(1);
    expect(set.structuredContent).toEqual({ address: to, rule: rules[0], rules });
    expect((await client.callTool({ name: 'list_smtp_rules', arguments: { address: to } })).structuredContent).toEqual({ address: to, rules });

    const refused = (await sendMail(server, { to, subject: 'Confirm', text: 'x' }).catch((e: unknown) => e)) as { responseCode?: number; response?: string };
    expect(refused.responseCode).toBe(451);
    expect(refused.response).toMatch(/^451 4\.7\.1 /);
    clock.advance(2000);
    expect(await sendMail(server, { to, subject: 'Confirm', text: 'x' })).toMatch(/^250 /);

    const read = await client.callTool({ name: 'list_smtp_attempts', arguments: { address: to } });
    expect(read.isError).toBeUndefined();
    // every field as the service wrote it, through the client and back
    expect(read.structuredContent).toEqual((await call(server, `/api/v1/mailbox/attempts${q(to)}`)).json);
    const outcomes = (read.structuredContent as Structured).attempts.map((a: Structured) => [a.code, a.enhanced_code, a.outcome, a.rule]);
    expect(outcomes).toEqual([
      [451, '4.7.1', 'deferred', 'greylist'],
      [250, '2.6.0', 'accepted', null],
    ]);
    expect(textOf(read)).toMatch(/mail 1, try 1 {2}RCPT {2}451 4\.7\.1 {2}deferred {2}\(greylist\) {2}client 127\.0\.0\.1, MAIL FROM <app@example\.com>/);
    expect(textOf(read)).toMatch(/mail 1, try 2 {2}DATA {2}250 2\.6\.0 {2}accepted {2}waited 2 s/);

    const cleared = await client.callTool({ name: 'clear_smtp_rules', arguments: { address: to } });
    expect(cleared.structuredContent).toEqual({ cleared: 1 });
    expect((await call(server, `/api/v1/mailbox/rules${q(to)}`)).json.rules).toEqual([]);
  });

  it("sends a rule as given, so the service's parser refuses a bad one with invalid_request naming the field", async () => {
    const server = await start({ catchAll: false });
    const client = await proxyTo(server);
    const to = freshAddress('stdio-bad');
    for (const [rule, words] of [
      [{ kind: 'greylist', min_delay_ms: '2s' }, /Expected `min_delay_ms` to be a whole number of milliseconds from 0 to 86400000, got "2s"/],
      [{ kind: 'greylist', minDelay: 2000 }, /Unknown field `minDelay` for a greylist rule/],
      [{ kind: 'slow' }, /A slow rule needs `delay_ms`/],
    ] as const) {
      const result = await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, ...rule } });
      expect(result.isError, JSON.stringify(rule)).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'invalid_request' });
      expect((result.structuredContent as Structured).message).toMatch(words);
    }
    const unknown = await client.callTool({ name: 'set_smtp_rule', arguments: { address: 'someone@elsewhere.test', kind: 'greylist' } });
    expect(unknown.structuredContent).toMatchObject({ error: 'unknown_domain' });
    const attempts = await client.callTool({ name: 'list_smtp_attempts', arguments: { address: 'someone@elsewhere.test' } });
    expect(attempts.structuredContent).toMatchObject({ error: 'unknown_domain' });
    expect((await call(server, `/api/v1/mailbox/rules${q(to)}`)).json.rules).toEqual([]);
  });

  it('offers no lab tools in front of a service without the lab (smtpRules: false)', async () => {
    const server = await start({ smtpRules: false });
    const client = await proxyTo(server);
    expect(await toolNames(client)).toEqual(MAIL_TOOLS);
  });

  it('adds the lab tools, and says the list changed, once a service that was down when it started answers', async () => {
    const port = await freePort();
    const client = await proxyTo(`http://127.0.0.1:${port}`);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    expect(await toolNames(client)).toEqual(MAIL_TOOLS);

    await start({ httpPort: port });
    await until(() => changed > 0, 'the proxy says the tool list changed', 15_000);
    expect(await toolNames(client)).toEqual([...LAB_TOOLS, ...MAIL_TOOLS].sort());
    const listed = await client.callTool({ name: 'list_smtp_rules', arguments: { address: freshAddress() } });
    expect(listed.isError).toBeUndefined();
  });
});
