// POST /mcp: the four tools per the contract, through a bare curl-shaped POST
// (undici, exactly the seed's headers and body) and through the official SDK
// client over streamable HTTP. Mail arrives over real SMTP.
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MCP_MAX_ATTACHMENT_BYTES } from '../../src/contract/limits.js';
import { call, fakeClock, freshAddress, listPath, messagePath, sendMail, start } from './helpers.js';
import { connectMcp, countLooks, postMcp, slotsInUse, toolCall, until } from './wait-helpers.js';

// The seed's example, byte for byte (seeds/000, "Quando a espera é responsabilidade do servidor").
const SEED_BODY = `{
  "jsonrpc":"2.0","id":1,"method":"tools/call",
  "params":{"name":"wait_for_message","arguments":{
    "address":"signup-42@grabmail.io","subject_contains":"code",
    "timeout_seconds":25}}}`;

type Structured = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
}

describe("the seed's curl call", () => {
  it('works verbatim (Content-Type only, no Accept, no initialize) and answers plain JSON once the mail arrives', async () => {
    const server = await start({ domains: ['grabmail.io'] });
    const answer = postMcp(server, SEED_BODY, { 'Content-Type': 'application/json' });
    await until(() => slotsInUse(server).mcp === 1, 'the wait is held');
    await sendMail(server, { to: 'signup-42@grabmail.io', subject: 'Welcome', text: 'no code here' });
    await sendMail(server, { to: 'signup-42@grabmail.io', subject: 'Your code', text: 'Your code is 482913.' });
    const { status, headers, json } = await answer;

    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^application\/json/);
    expect(json.jsonrpc).toBe('2.0');
    expect(json.id).toBe(1);
    expect(json.result.isError).toBeUndefined();
    const result = json.result as CallToolResult;
    expect(result.structuredContent).toMatchObject({ timed_out: false, message: { subject: 'Your code', to: ['signup-42@grabmail.io'] } });
    expect((result.structuredContent as Structured).message.text).toContain('482913');
    expect((result.structuredContent as Structured).waited_seconds).toBeGreaterThan(0);
    expect(textOf(result)).toContain('Subject: Your code');
    expect(textOf(result)).toContain('Your code is 482913.');
  });

  it("answers the same with curl's default Accept: */*", async () => {
    const server = await start({ domains: ['grabmail.io'] });
    await sendMail(server, { to: 'signup-42@grabmail.io', subject: 'Your code', text: 'Your code is 1.' });
    const { status, headers, json } = await postMcp(server, SEED_BODY, { 'Content-Type': 'application/json', Accept: '*/*' });
    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^application\/json/);
    expect(json.result.structuredContent.message.subject).toBe('Your code');
  });

  it('streams only when the client asks for text/event-stream', async () => {
    const server = await start({ domains: ['grabmail.io'] });
    await sendMail(server, { to: 'signup-42@grabmail.io', subject: 'Your code', text: 'x' });
    const { status, headers, text } = await postMcp(server, SEED_BODY, { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' });
    expect(status).toBe(200);
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    const data = text.split('\n').find((line) => line.startsWith('data: '));
    expect(JSON.parse(data!.slice('data: '.length)).result.structuredContent.message.subject).toBe('Your code');
  });

  it('refuses other methods on /mcp with 405 and Allow: POST', async () => {
    const server = await start();
    for (const method of ['GET', 'DELETE'] as const) {
      const answer = await call(server, '/mcp', { method });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe('POST');
    }
  });

  it('answers a body that is not JSON with a JSON-RPC parse error', async () => {
    const server = await start();
    const { status, json } = await postMcp(server, '{"jsonrpc":', { 'Content-Type': 'application/json' });
    expect(status).toBe(400);
    expect(json.error.code).toBe(-32700);
  });
});

describe('wait_for_message through the SDK client', () => {
  it('lists the six mail tools (and, with the lab on, its four: mcp-smtp-lab.test.ts), and the instructions name the served domain', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const { tools } = await client.listTools();
    expect(
      tools
        .map((t) => t.name)
        .filter((name) => !name.includes('smtp'))
        .sort(),
    ).toEqual(['delete_message', 'fresh_address', 'get_attachment', 'get_message', 'list_messages', 'wait_for_message']);
    const wait = tools.find((t) => t.name === 'wait_for_message')!;
    expect(Object.keys(wait.inputSchema.properties ?? {}).sort()).toEqual(['address', 'from_contains', 'since_id', 'subject_contains', 'timeout_seconds']);
    expect(wait.inputSchema.required).toEqual(['address']);
    expect(client.getInstructions()).toContain('mailroom.test');
  });

  it('answers with the oldest matching message newer than since_id', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Your code 1', text: 'code 111' });
    const [first] = (await call(server, listPath(address))).json.messages;
    await sendMail(server, { to: address, subject: 'Newsletter', text: 'x' });
    await sendMail(server, { to: address, subject: 'Your code 2', text: 'code 222' });
    await sendMail(server, { to: address, subject: 'Your code 3', text: 'code 333' });

    const next = await client.callTool({ name: 'wait_for_message', arguments: { address, subject_contains: 'code', since_id: first.id, timeout_seconds: 10 } });
    expect((next.structuredContent as Structured).message.subject).toBe('Your code 2');
    const after = await client.callTool({
      name: 'wait_for_message',
      arguments: { address, subject_contains: 'code', since_id: (next.structuredContent as Structured).message.id, timeout_seconds: 10 },
    });
    expect((after.structuredContent as Structured).message.subject).toBe('Your code 3');
    expect(textOf(after)).toContain(`since_id=${(after.structuredContent as Structured).message.id}`);
  });

  it('without since_id answers at once with the oldest message that already matches', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, from: 'Acme <no-reply@acme.test>', subject: 'Welcome', text: 'x' });
    await sendMail(server, { to: address, from: 'Acme <no-reply@acme.test>', subject: 'Your code', text: 'x' });
    const result = await client.callTool({ name: 'wait_for_message', arguments: { address, from_contains: 'ACME' } });
    expect((result.structuredContent as Structured).message.subject).toBe('Welcome');
    expect((result.structuredContent as Structured).waited_seconds).toBeLessThan(5);
  });

  it('is woken by the arrival itself', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const address = freshAddress();
    const looks = countLooks(server);
    const pending = client.callTool({ name: 'wait_for_message', arguments: { address, subject_contains: 'reset', timeout_seconds: 20 } });
    await until(() => slotsInUse(server).mcp === 1 && looks(address) === 1, 'the wait is held and has looked');
    await sendMail(server, { to: address, subject: 'Password reset', text: 'Reset here' });
    const result = await pending;
    // No look after the first: the arrival answered it (a poll would have looked again to find it).
    expect(looks(address)).toBe(1);
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as Structured).message.text).toContain('Reset here');
    expect((result.structuredContent as Structured).waited_seconds).toBeLessThan(20);
    expect(slotsInUse(server).mcp).toBe(0);
  });

  it('times out as an answer, not an error: timed_out, how long it waited, and that calling again keeps waiting', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const address = freshAddress();
    const result = await client.callTool({ name: 'wait_for_message', arguments: { address, subject_contains: 'code', timeout_seconds: 1 } });
    expect(result.isError).toBeUndefined();
    const facts = result.structuredContent as Structured;
    expect(facts.timed_out).toBe(true);
    expect(facts.message).toBeUndefined();
    expect(facts.waited_seconds).toBeGreaterThanOrEqual(0.95);
    expect(facts.waited_seconds).toBeLessThan(10);
    expect(textOf(result)).toContain(`No message with subject containing "code" arrived at ${address} within 1 s`);
    expect(textOf(result)).toMatch(/not an error.*Call wait_for_message again/);
  });

  it('refuses an address it can never serve (catchAll off) with a tool error carrying the slug', async () => {
    const server = await start({ catchAll: false });
    const client = await connectMcp(server);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ address: 'not an address' }, 'invalid_address'],
      [{ address: 'someone@elsewhere.test' }, 'unknown_domain'],
      [{ address: freshAddress(), since_id: 'yesterday' }, 'invalid_request'],
    ];
    const looks = countLooks(server);
    for (const [args, slug] of cases) {
      const result = await client.callTool({ name: 'wait_for_message', arguments: args });
      // At once: refused before the wait took a slot or looked at any mailbox.
      expect({ looks: looks(), held: slotsInUse(server).mcp }).toEqual({ looks: 0, held: 0 });
      expect(result.isError).toBe(true);
      expect((result.structuredContent as Structured).error).toBe(slug);
      expect(textOf(result)).toContain(slug);
    }
  });

  it('has 8 slots and no queue: the ninth wait answers at once with too_many_waits, and a freed slot is taken again', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const addresses = Array.from({ length: 8 }, () => freshAddress());
    const held = addresses.map((address) => client.callTool({ name: 'wait_for_message', arguments: { address, timeout_seconds: 20 } }));
    await until(() => slotsInUse(server).mcp === 8, 'eight waits are held');

    let settled = 0;
    for (const wait of held) void wait.finally(() => settled++);
    const ninth = await client.callTool({ name: 'wait_for_message', arguments: { address: freshAddress(), timeout_seconds: 20 } });
    // At once: refused while all eight are still held (they end at 20 s or at an arrival), so it did not queue.
    expect({ settled, held: slotsInUse(server).mcp }).toEqual({ settled: 0, held: 8 });
    expect(ninth.isError).toBe(true);
    expect((ninth.structuredContent as Structured).error).toBe('too_many_waits');
    expect(textOf(ninth)).toMatch(/too many waits are in progress/i);

    // The long-poll's slots are separate: a test suite never takes an agent's slot, nor the reverse.
    const longPoll = await call(server, `/api/v1/mailbox/wait?${new URLSearchParams({ address: freshAddress(), timeout: '0' })}`);
    expect(longPoll.status).toBe(200);

    await sendMail(server, { to: addresses, subject: 'Everyone', text: 'x' });
    const answers = await Promise.all(held);
    expect(answers.map((a) => (a.structuredContent as Structured).message?.subject)).toEqual(Array(8).fill('Everyone'));
    expect(slotsInUse(server).mcp).toBe(0);
    const tenth = await client.callTool({ name: 'wait_for_message', arguments: { address: freshAddress(), timeout_seconds: 0 } });
    expect(tenth.isError).toBeUndefined();
    expect((tenth.structuredContent as Structured).timed_out).toBe(true);
  });

  it('frees its slot when the caller hangs up', async () => {
    const server = await start();
    const controller = new AbortController();
    const abandoned = postMcp(
      server,
      toolCall('wait_for_message', { address: freshAddress(), timeout_seconds: 20 }),
      { 'content-type': 'application/json' },
      controller.signal,
    );
    await until(() => slotsInUse(server).mcp === 1, 'the wait is held');
    controller.abort();
    await expect(abandoned).rejects.toThrow();
    await until(() => slotsInUse(server).mcp === 0, 'the slot is free again');
  });
});

describe('the list budget inside wait_for_message', () => {
  it('spends a list call: a list call right after a wait gets 429', async () => {
    // The server's clock stands still: "right after" is within the second
    // however long a loaded machine takes between the two calls.
    const server = await start({ clock: fakeClock() });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Your code', text: 'x' });
    const result = await client.callTool({ name: 'wait_for_message', arguments: { address, timeout_seconds: 10 } });
    expect((result.structuredContent as Structured).message.subject).toBe('Your code');
    const list = await call(server, listPath(address));
    expect(list.status).toBe(429);
    expect(list.json.error).toBe('rate_limited');
    const viaTool = await client.callTool({ name: 'list_messages', arguments: { address } });
    expect(viaTool.isError).toBe(true);
    expect(viaTool.structuredContent).toMatchObject({ error: 'rate_limited', retry_after_seconds: 1 });
  });

  it('is no way around the floor: right after a list call, its look waits for the budget', async () => {
    const server = await start({ listPerSecond: 0.5 });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Already here', text: 'x' });
    const listSentAt = performance.now();
    expect((await call(server, listPath(address))).status).toBe(200);
    const result = await client.callTool({ name: 'wait_for_message', arguments: { address, timeout_seconds: 10 } });
    const answeredAt = performance.now();
    expect((result.structuredContent as Structured).message.subject).toBe('Already here');
    expect((result.structuredContent as Structured).waited_seconds).toBeGreaterThan(0);
    // The look is allowed 2 s after the list call was stamped, so the answer
    // never comes sooner than 2 s after that call was sent. (Counted from the
    // wait's arrival instead, a loaded machine's delay between the two calls
    // came off it: the same flake as long-poll.test.ts's, run s49.)
    expect(answeredAt - listSentAt).toBeGreaterThanOrEqual(1_990);
  });
});

describe('list_messages, get_message, delete_message', () => {
  it('mirror the HTTP calls, with the same facts as structured content', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Hello', text: 'Body text', html: '<p>Body</p>', attachments: [{ filename: 'a.txt', content: 'aaa' }] });

    const list = await client.callTool({ name: 'list_messages', arguments: { address } });
    const http = (await call(server, listPath(address))).json;
    expect(list.structuredContent).toEqual(http);
    expect(textOf(list)).toContain(`1 message at ${address}`);
    const id = http.messages[0].id;

    const message = await client.callTool({ name: 'get_message', arguments: { address, id } });
    expect(message.structuredContent).toEqual({ ...(await call(server, messagePath(id, address))).json, links: [], codes: [] });
    expect(textOf(message)).toContain('Body text');
    expect(textOf(message)).toContain('Attachments: a.txt (text/plain, 3 bytes)');

    const deleted = await client.callTool({ name: 'delete_message', arguments: { address, id } });
    expect(deleted.structuredContent).toEqual({ deleted: true });
    const again = await client.callTool({ name: 'delete_message', arguments: { address, id } });
    expect(again.isError).toBeUndefined();
    expect(again.structuredContent).toEqual({ deleted: false });

    const gone = await client.callTool({ name: 'get_message', arguments: { address, id } });
    expect(gone.isError).toBe(true);
    expect(gone.structuredContent).toMatchObject({ error: 'not_found' });
    const malformed = await client.callTool({ name: 'get_message', arguments: { address, id: '../etc' } });
    expect(malformed.structuredContent).toMatchObject({ error: 'invalid_request' });
    const empty = await client.callTool({ name: 'list_messages', arguments: { address } });
    expect(textOf(empty)).toBe(`The mailbox ${address} is empty.`);
  });
});

describe("an agent's signup flow: fresh_address, links and codes, get_attachment", () => {
  it('fresh_address makes a readable address of its own on a served domain, and the wait after it sees only what comes after', async () => {
    const server = await start({ domains: ['grabmail.io', 'other.test'], catchAll: false });
    const client = await connectMcp(server);
    const first = await client.callTool({ name: 'fresh_address', arguments: { label: 'Sign up: Confirmação' } });
    const second = await client.callTool({ name: 'fresh_address', arguments: { label: 'Sign up: Confirmação' } });
    const made = first.structuredContent as Structured;
    expect(made).toEqual({ address: expect.stringMatching(/^sign-up-confirmacao-[a-z2-7]{16}@grabmail\.io$/), domain: 'grabmail.io', since_id: null });
    expect((second.structuredContent as Structured).address).not.toBe(made.address);
    expect(textOf(first)).toContain(`call wait_for_message with address=${made.address}`);

    const onOther = await client.callTool({ name: 'fresh_address', arguments: { domain: 'OTHER.test' } });
    expect((onOther.structuredContent as Structured).address).toMatch(/^inbox-[a-z2-7]{16}@other\.test$/);
    const refused = await client.callTool({ name: 'fresh_address', arguments: { domain: 'elsewhere.test' } });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ error: 'unknown_domain' });
    expect(textOf(refused)).toContain('elsewhere.test');

    // The address is its own: the wait right after it spends the list call fresh_address did not.
    const waiting = client.callTool({ name: 'wait_for_message', arguments: { address: made.address, timeout_seconds: 20 } });
    await until(() => slotsInUse(server).mcp === 1, 'the wait is held');
    await sendMail(server, { to: made.address, subject: 'Welcome', text: 'Hi' });
    const result = await waiting;
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as Structured).message.subject).toBe('Welcome');
  });

  it("hands over an HTML-only mail's links (with their words) and its code, not the order number, date or phone, and renders the HTML readably", async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, {
      to: address,
      subject: 'Confirm your email',
      html:
        '<h1>Welcome!</h1><p>Order #88231 placed on 2026-12-07. Questions? Call 555-0100.</p>' +
        '<p>Your verification code is <b>482913</b>.</p>' +
        '<p><a href="https://app.test/verify?t=abc">Confirm my email</a> or <a href="https://app.test/unsubscribe">unsubscribe</a></p>',
    });
    const waited = await client.callTool({ name: 'wait_for_message', arguments: { address } });
    const message = (waited.structuredContent as Structured).message;
    expect(message.codes).toEqual(['482913']);
    expect(message.links).toEqual([
      { url: 'https://app.test/verify?t=abc', text: 'Confirm my email' },
      { url: 'https://app.test/unsubscribe', text: 'unsubscribe' },
    ]);
    const text = textOf(waited);
    expect(text).not.toContain('the HTML body is in the structured content');
    expect(text).toContain('# Welcome!');
    expect(text).toContain('One-time code: 482913');
    expect(text).toContain('- "Confirm my email": https://app.test/verify?t=abc');

    const read = await client.callTool({ name: 'get_message', arguments: { address, id: message.id } });
    expect(read.structuredContent).toMatchObject({ codes: ['482913'], links: message.links });
    expect(textOf(read)).toContain('One-time code: 482913');
  });

  it('get_attachment returns text inline, other bytes as base64, and refuses past the cap or a missing one, naming it', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, {
      to: address,
      subject: 'Your invoice',
      text: 'Attached.',
      attachments: [
        { filename: 'invoice.csv', content: 'item,total\nplan,10\n', contentType: 'text/csv' },
        { filename: 'logo.png', content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]), contentType: 'image/png' },
        { filename: 'huge.bin', content: Buffer.alloc(MCP_MAX_ATTACHMENT_BYTES + 1), contentType: 'application/octet-stream' },
      ],
    });
    const [{ id }] = (await call(server, listPath(address))).json.messages;
    const get = (args: Record<string, unknown>) => client.callTool({ name: 'get_attachment', arguments: { address, id, ...args } });

    const csv = await get({ index: 0 });
    expect(csv.structuredContent).toEqual({
      filename: 'invoice.csv',
      content_type: 'text/csv',
      size: 19,
      index: 0,
      encoding: 'text',
      text: 'item,total\nplan,10\n',
    });
    expect(textOf(csv)).toContain('item,total');
    const png = await get({ filename: 'logo.png' });
    expect(png.structuredContent).toMatchObject({ index: 1, encoding: 'base64', base64: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]).toString('base64') });

    const huge = await get({ index: 2 });
    expect(huge.isError).toBe(true);
    expect(huge.structuredContent).toMatchObject({ error: 'too_large' });
    expect(textOf(huge)).toContain('huge.bin');
    const missing = await get({ filename: 'nope.pdf' });
    expect(missing.structuredContent).toMatchObject({ error: 'not_found' });
    expect(textOf(missing)).toContain('0: invoice.csv, 1: logo.png, 2: huge.bin');
    expect(((await get({})).structuredContent as Structured).error).toBe('invalid_request');
  });
});

describe('prompts and resources', () => {
  it('offers prompts for the common flows, each waiting rather than polling', async () => {
    const server = await start();
    const client = await connectMcp(server);
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual(['check_no_mail_sent', 'follow_password_reset', 'verify_signup']);
    const signup = await client.getPrompt({ name: 'verify_signup', arguments: { signup_url: 'http://localhost:3000/signup' } });
    const steps = (signup.messages[0]!.content as { text: string }).text;
    expect(steps).toContain('Call fresh_address');
    expect(steps).toContain('http://localhost:3000/signup');
    expect(steps).toMatch(/Call wait_for_message .*do not poll/);
    const none = await client.getPrompt({ name: 'check_no_mail_sent', arguments: { address: 'a@mailroom.test', action: 'sign up again' } });
    expect((none.messages[0]!.content as { text: string }).text).toMatch(/timeout_seconds 10\. An answer with timed_out true is the pass/);
  });

  it('reads a mailbox and a message as resources, as the tools show them, and refuses with the slug', async () => {
    const server = await start({ listPerSecond: Infinity });
    const client = await connectMcp(server);
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Your code', text: 'Your code is 482913.' });
    const mailbox = await client.readResource({ uri: `mailroom://mailbox/${address}` });
    expect((mailbox.contents[0] as { text: string }).text).toContain(`1 message at ${address}`);
    const [{ id }] = (await call(server, listPath(address))).json.messages;
    const message = await client.readResource({ uri: `mailroom://message/${address}/${id}` });
    expect((message.contents[0] as { text: string }).text).toContain('One-time code: 482913');
    await expect(client.readResource({ uri: `mailroom://message/${address}/00000000000` })).rejects.toThrow(/not_found/);
  });
});

describe('a server with a token', () => {
  it('refuses /mcp without it (401 unauthorized) and serves the SDK client that sends it', async () => {
    const server = await start({ token: 's3cret' });
    const refused = await postMcp(server, SEED_BODY, { 'Content-Type': 'application/json' });
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe('unauthorized');
    expect(refused.headers['www-authenticate']).toBe('Bearer');

    const client = await connectMcp(server, { authorization: 'Bearer s3cret' });
    const result = await client.callTool({ name: 'list_messages', arguments: { address: freshAddress() } });
    expect(result.isError).toBeUndefined();
  });
});
