// The SMTP deferral lab's MCP tools on POST /mcp, through the official SDK
// client: a greylist set by an agent, real SMTP (nodemailer) deferred and
// then let through, and the attempt log read back as a timeline and as the
// HTTP API's entries; bad rules refused with the API's words; the tools
// absent when the lab is off. The greylist window runs on the injected clock.
import { describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { call, fakeClock, freshAddress, sendMail, start } from './helpers.js';
import { connectMcp } from './wait-helpers.js';

type Structured = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const MAIL_TOOLS = ['delete_message', 'fresh_address', 'get_attachment', 'get_message', 'list_messages', 'wait_for_message'];
const LAB_TOOLS = ['clear_smtp_rules', 'list_smtp_attempts', 'list_smtp_rules', 'set_smtp_rule'];

function textOf(result: unknown): string {
  return (((result as { content?: unknown }).content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? '').join('\n');
}

const q = (address: string) => `?${new URLSearchParams({ address })}`;

async function sendFails(server: MailroomServer, mail: { to: string; subject: string }): Promise<{ responseCode?: number; response?: string }> {
  const error = await sendMail(server, { ...mail, text: 'x' }).then(
    (reply) => {
      throw new Error(`expected the send to be refused, got ${reply}`);
    },
    (e: unknown) => e,
  );
  return error as { responseCode?: number; response?: string };
}

describe('the lab tools on the embedded server', () => {
  it('are listed beside the mail tools, with the HTTP API field names, and the instructions tell an agent about them', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...LAB_TOOLS, ...MAIL_TOOLS].sort());
    const set = tools.find((t) => t.name === 'set_smtp_rule')!;
    expect(Object.keys(set.inputSchema.properties ?? {}).sort()).toEqual(
      [
        'address',
        'code',
        'delay_ms',
        'enhanced_code',
        'kind',
        'limit',
        'min_delay_ms',
        'per_ms',
        'reset_on_early_retry',
        'retry_after_ms',
        'stage',
        'status',
        'text',
        'times',
      ].sort(),
    );
    expect(set.inputSchema.required).toEqual(['address', 'kind']);
    expect(set.inputSchema.properties!.kind).toMatchObject({
      type: 'string',
      enum: ['greylist', 'throttle', 'defer', 'reject', 'slow', 'disconnect', 'rate_limit', 'unavailable'],
    });
    expect(set.inputSchema.properties!.min_delay_ms).toMatchObject({ type: 'integer', minimum: 0, maximum: 86_400_000 });
    expect(set.description).toContain('list_smtp_attempts');
    expect(tools.find((t) => t.name === 'list_smtp_attempts')!.description).toMatch(/retried/);
    expect(client.getInstructions()).toContain('set_smtp_rule');
  });

  it('greylist through MCP: nodemailer gets 451 4.7.1, the retry after min_delay_ms is accepted, and the attempts tool shows both', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const client = await connectMcp(server);
    const to = freshAddress('mcp-grey');

    const set = await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, kind: 'greylist', min_delay_ms: 2000 } });
    expect(set.isError).toBeUndefined();
    const added = set.structuredContent as Structured;
    expect(added.rule).toMatchObject({ id: 'r1', kind: 'greylist', min_delay_ms: 2000, reset_on_early_retry: false, remaining: null });
    expect(added.rules).toEqual([added.rule]);
    expect(textOf(set)).toContain('r1 greylist (min_delay_ms=2000, reset_on_early_retry=false): acts until cleared');
    // the rule is the HTTP API's, in the same lab
    expect((await call(server, `/api/v1/mailbox/rules${q(to)}`)).json).toEqual({ address: to, rules: added.rules });
    const listed = await client.callTool({ name: 'list_smtp_rules', arguments: { address: to } });
    expect(listed.structuredContent).toEqual({ address: to, rules: added.rules });

    const refused = await sendFails(server, { to, subject: 'Confirm your email' });
    expect(refused.responseCode).toBe(451);
    expect(refused.response).toMatch(/^451 4\.7\.1 Greylisted: first attempt .*mailroom test rule: greylist on /);
    clock.advance(2000);
    expect(await sendMail(server, { to, subject: 'Confirm your email', text: 'x' })).toMatch(/^250 /);

    const read = await client.callTool({ name: 'list_smtp_attempts', arguments: { address: to } });
    expect(read.isError).toBeUndefined();
    const log = read.structuredContent as Structured;
    expect(log.attempts.map((a: Structured) => [a.stage, a.code, a.enhanced_code, a.outcome, a.rule, a.client_ip, a.from])).toEqual([
      ['rcpt', 451, '4.7.1', 'deferred', 'greylist', '127.0.0.1', 'app@example.com'],
      ['data', 250, '2.6.0', 'accepted', null, '127.0.0.1', 'app@example.com'],
    ]);
    // the same entries the HTTP API shows
    expect((await call(server, `/api/v1/mailbox/attempts${q(to)}`)).json).toEqual(log);

    const text = textOf(read);
    const first = new Date(log.attempts[0].at).toISOString();
    expect(text).toContain(`SMTP attempts at ${to}: 1 mail, 2 attempts, times from the first (${first}):`);
    expect(text).toMatch(/\+0\.000 s {2}mail 1, try 1 {2}RCPT {2}451 4\.7\.1 {2}deferred {2}\(greylist\) {2}client 127\.0\.0\.1, MAIL FROM <app@example\.com>/);
    expect(text).toMatch(
      /\+2\.000 s {2}mail 1, try 2 {2}DATA {2}250 2\.6\.0 {2}accepted {2}waited 2 s {2}client 127\.0\.0\.1, MAIL FROM <app@example\.com> {2}"Confirm your email"/,
    );
    expect(text).toContain('So far: mail 1 was accepted on try 2; 1 retry in all.');

    // and the mail is there for wait_for_message
    const mail = await client.callTool({ name: 'wait_for_message', arguments: { address: to, timeout_seconds: 5 } });
    expect((mail.structuredContent as Structured).message.subject).toBe('Confirm your email');
  });

  it('clear_smtp_rules ends the rules (a new sender passes at once) and keeps the log', async () => {
    const clock = fakeClock();
    const server = await start({ clock });
    const client = await connectMcp(server);
    const to = freshAddress('mcp-clear');
    await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, kind: 'greylist' } });
    await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, kind: 'reject', times: 3 } });
    expect((await sendFails(server, { to, subject: 'one' })).responseCode).toBe(451);

    const cleared = await client.callTool({ name: 'clear_smtp_rules', arguments: { address: to } });
    expect(cleared.structuredContent).toEqual({ cleared: 2 });
    expect(textOf(cleared)).toContain('Cleared 2 rules of');
    expect((await client.callTool({ name: 'list_smtp_rules', arguments: { address: to } })).structuredContent).toEqual({ address: to, rules: [] });
    expect(await sendMail(server, { to, from: 'other@example.com', subject: 'two', text: 'x' })).toMatch(/^250 /);
    const again = await client.callTool({ name: 'clear_smtp_rules', arguments: { address: to } });
    expect(again.structuredContent).toEqual({ cleared: 0 });

    const log = (await client.callTool({ name: 'list_smtp_attempts', arguments: { address: to } })).structuredContent as Structured;
    expect(log.attempts.map((a: Structured) => a.outcome)).toEqual(['deferred', 'accepted']);
  });

  it('a rule is checked by the HTTP API’s parser: refused with invalid_request naming the field, in the same words', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const to = freshAddress('mcp-bad');
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ kind: 'greylist', min_delay_ms: '2s' }, /Expected `min_delay_ms` to be a whole number of milliseconds from 0 to 86400000, got "2s"/],
      [{ kind: 'greylist', minDelay: 2000 }, /Unknown field `minDelay` for a greylist rule; it takes `min_delay_ms`, `reset_on_early_retry`/],
      [{ kind: 'throttle', per_ms: 1000 }, /A throttle rule needs `limit`/],
      [{ kind: 'bounce' }, /Expected `kind` to be "greylist", "throttle", "defer", "reject", "slow", "disconnect", "rate_limit", "unavailable", got "bounce"/],
      [{}, /Expected `kind` to be .*, got undefined/],
      [{ kind: 'defer', code: 550 }, /Expected `code` to be 450, 451 or 452, got 550/],
      [{ kind: 'disconnect', times: 0 }, /Expected `times` to be a whole number of attempts from 1 to 10000, got 0/],
    ];
    for (const [rule, words] of cases) {
      const result = await client.callTool({ name: 'set_smtp_rule', arguments: { address: to, ...rule } });
      expect(result.isError, JSON.stringify(rule)).toBe(true);
      const facts = result.structuredContent as Structured;
      expect(facts.error).toBe('invalid_request');
      expect(facts.message).toMatch(words);
      expect(textOf(result)).toMatch(/^invalid_request: Invalid rule for /);
      // the HTTP API says exactly the same of the same rule
      const http = await call(server, `/api/v1/mailbox/rules${q(to)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rule),
      });
      expect(http.json).toEqual({ error: 'invalid_request', message: facts.message });
    }
    expect((await call(server, `/api/v1/mailbox/rules${q(to)}`)).json.rules).toEqual([]);
  });

  it('takes a field given as null as left out, and fills in the defaults', async () => {
    const server = await start();
    const client = await connectMcp(server);
    const to = freshAddress('mcp-null');
    const result = await client.callTool({
      name: 'set_smtp_rule',
      arguments: { address: to, kind: 'defer', code: null, enhanced_code: null, text: null, stage: null, times: 2, min_delay_ms: null },
    });
    expect(result.isError).toBeUndefined();
    expect((result.structuredContent as Structured).rule).toMatchObject({
      kind: 'defer',
      code: 451,
      enhanced_code: '4.3.0',
      text: null,
      stage: 'rcpt',
      times: 2,
      remaining: 2,
    });
    expect(textOf(result)).toContain('acts on the next 2 attempts');
  });

  it('refuses an address at a domain the server does not serve (catchAll off), and a malformed one, with their slugs', async () => {
    const server = await start({ catchAll: false });
    const client = await connectMcp(server);
    for (const name of ['set_smtp_rule', 'list_smtp_rules', 'clear_smtp_rules', 'list_smtp_attempts']) {
      const unknown = await client.callTool({ name, arguments: { address: 'someone@elsewhere.test', kind: 'greylist' } });
      expect(unknown.isError, name).toBe(true);
      expect(unknown.structuredContent, name).toMatchObject({ error: 'unknown_domain' });
      const malformed = await client.callTool({ name, arguments: { address: 'not an address', kind: 'greylist' } });
      expect(malformed.structuredContent, name).toMatchObject({ error: 'invalid_address' });
    }
    // an unknown domain is refused before the rule is looked at
    const both = await client.callTool({ name: 'set_smtp_rule', arguments: { address: 'someone@elsewhere.test', kind: 'bounce' } });
    expect(both.structuredContent).toMatchObject({ error: 'unknown_domain' });
  });

  it('reading the log draws on the message budget: past it, rate_limited with retry_after_seconds', async () => {
    const server = await start({ messagePerSecond: 1 });
    const client = await connectMcp(server);
    const to = freshAddress('mcp-budget');
    const first = await client.callTool({ name: 'list_smtp_attempts', arguments: { address: to } });
    expect(first.isError).toBeUndefined();
    expect(first.structuredContent).toEqual({ address: to, attempts: [] });
    expect(textOf(first)).toContain(`No SMTP attempt has named ${to} yet`);
    const second = await client.callTool({ name: 'list_smtp_attempts', arguments: { address: to } });
    expect(second.isError).toBe(true);
    expect(second.structuredContent).toMatchObject({ error: 'rate_limited', retry_after_seconds: 1 });
    // setting and listing rules draw on no budget
    expect((await client.callTool({ name: 'list_smtp_rules', arguments: { address: to } })).isError).toBeUndefined();
  });

  it('are not offered when the lab is off (smtpRules: false)', async () => {
    const server = await start({ smtpRules: false });
    const client = await connectMcp(server);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(MAIL_TOOLS);
    expect(client.getInstructions()).not.toContain('set_smtp_rule');
    const result = await client.callTool({ name: 'set_smtp_rule', arguments: { address: freshAddress(), kind: 'greylist' } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Tool set_smtp_rule not found/);
  });
});
