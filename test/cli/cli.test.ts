// `mailroom serve` as a user runs it: the built bin in a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { request } from 'undici';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/client/verify-webhook.js';
import { start } from '../server/helpers.js';
import { closeReceivers, startReceiver } from '../support/webhook-receiver.js';

const BIN = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const children: ChildProcess[] = [];
/** `node --import` it to record the packages a process loads (support/record-packages.mjs). */
const RECORDER = fileURLToPath(new URL('./support/record-packages.mjs', import.meta.url));

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
});

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await closeReceivers();
});

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[], env: Record<string, string> = {}, nodeOptions: string[] = []): Run {
  const child = spawn(process.execPath, [...nodeOptions, BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** Waits for the two ready lines and returns the ports they announce. */
async function ready(r: Run): Promise<{ smtpPort: number; apiURL: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const smtp = /SMTP listening on [^:]+:(\d+)/.exec(r.stdout());
    const http = /HTTP API listening on (http:\/\/\S+)\/api\/v1/.exec(r.stdout());
    if (smtp && http) return { smtpPort: Number(smtp[1]), apiURL: http[1]! };
    if (r.child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready; stdout: ${r.stdout()} stderr: ${r.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('mailroom serve', () => {
  it('prints help and exits 0', async () => {
    const r = run(['serve', '--help']);
    expect(await r.exit).toBe(0);
    for (const flag of [
      '--smtp-port',
      '--http-port',
      '--host',
      '--domain',
      '--retention',
      '--max-messages',
      '--token-file',
      '--webhook-secret-file',
      'MAILROOM_SMTP_PORT',
    ]) {
      expect(r.stdout()).toContain(flag);
    }
  });

  it('prints the same help to stdout for `mailroom mcp --help` and `-h`, as for serve', async () => {
    const serve = run(['serve', '--help']);
    expect(await serve.exit).toBe(0);
    for (const flag of ['--help', '-h']) {
      const r = run(['mcp', flag]);
      expect(await r.exit).toBe(0);
      expect(r.stdout()).toBe(serve.stdout());
      expect(r.stdout()).toContain('mailroom mcp [--api-url <url>] [--token-file <file>]');
      expect(r.stderr()).toBe('');
    }
  });

  it('serves mail on the announced ports and exits 0 on SIGTERM', async () => {
    const r = run(['serve', '--smtp-port', '0', '--http-port', '0', '--domain', 'one.test', '--domain', 'two.test', '--retention', '90s']);
    const { smtpPort, apiURL } = await ready(r);
    expect(r.stdout()).toMatch(/SMTP listening on 127\.0\.0\.1:\d+ for one\.test, two\.test\n/);
    await expect.poll(() => r.stdout().trim().split('\n').length).toBe(3);
    expect(r.stdout()).toContain(
      `provider APIs (Resend, SES, SendGrid, Postmark, Mailgun, Brevo) at ${apiURL}: set RESEND_BASE_URL=${apiURL} AWS_ENDPOINT_URL_SES=${apiURL} AWS_ENDPOINT_URL_SESV2=${apiURL}`,
    );
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true });
    await transport.sendMail({ from: 'app@example.com', to: 'someone@two.test', subject: 'via the CLI', text: 'x' });
    transport.close();
    const answer = await request(`${apiURL}/api/v1/mailbox?address=someone@two.test`);
    const body = (await answer.body.json()) as { messages: Array<{ subject: string }> };
    expect(body.messages.map((m) => m.subject)).toEqual(['via the CLI']);
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
    expect(r.stdout()).toContain('SIGTERM received, shutting down');
  });

  it('loads the MCP SDK, zod and undici only when a call needs them: it takes mail and answers the API without them', async () => {
    // Over 400 modules that most servers under test never use: loading them
    // with the server was most of the CPU it took to start (0.38 s then, 0.21 s since).
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-cli-packages-'));
    const record = join(dir, 'packages.txt');
    const loaded = () => new Set(existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n') : []);
    try {
      const r = run(['serve', '--smtp-port', '0', '--http-port', '0'], { RECORD_PACKAGES_TO: record }, ['--import', RECORDER]);
      const { smtpPort, apiURL } = await ready(r);
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true });
      await transport.sendMail({ from: 'app@example.com', to: 'lazy@mailroom.test', subject: 'no MCP yet', html: '<a href="https://example.com">x</a>' });
      transport.close();
      const listing = await request(`${apiURL}/api/v1/mailbox?address=lazy@mailroom.test`);
      expect(((await listing.body.json()) as { messages: unknown[] }).messages).toHaveLength(1);
      const atStart = loaded();
      expect(atStart).toContain('smtp-server');
      expect(atStart).not.toContain('@modelcontextprotocol/sdk');
      expect(atStart).not.toContain('zod');
      expect(atStart).not.toContain('undici');

      const call = await request(`${apiURL}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(call.statusCode, await call.body.text()).toBe(200);
      const afterCall = loaded();
      expect(afterCall).toContain('@modelcontextprotocol/sdk');
      expect(afterCall).toContain('zod');
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads MAILROOM_* environment variables, and exits 0 on SIGINT', async () => {
    const r = run(['serve', '--enable-faults'], {
      MAILROOM_SMTP_PORT: '0',
      MAILROOM_HTTP_PORT: '0',
      MAILROOM_DOMAIN: 'env.test,other.test',
      MAILROOM_TOKEN: 'tok123',
    });
    const { apiURL } = await ready(r);
    expect(r.stdout()).toContain('for env.test, other.test');
    const refused = await request(`${apiURL}/api/v1/mailbox?address=a@env.test`);
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    const allowed = await request(`${apiURL}/_mailroom/stats?address=a@env.test`, { headers: { authorization: 'Bearer tok123' } });
    expect(allowed.statusCode).toBe(200);
    // A request without the token is not counted (issue 26: counters only after the token check).
    expect(await allowed.body.json()).toMatchObject({ list: 0 });
    r.child.kill('SIGINT');
    expect(await r.exit).toBe(0);
  });

  it('warns on stderr when bound beyond loopback without a token, and not otherwise', async () => {
    const open = run(['serve', '--host', '0.0.0.0', '--smtp-port', '0', '--http-port', '0']);
    await ready(open);
    expect(open.stderr()).toContain('mailroom: WARNING: listening on 0.0.0.0, which other machines may reach, without a token');
    expect(open.stderr()).toContain('Give it a token (MAILROOM_TOKEN, --token-file FILE');
    const guarded = run(['serve', '--host', '0.0.0.0', '--smtp-port', '0', '--http-port', '0'], { MAILROOM_TOKEN: 'tok123' });
    const loopback = run(['serve', '--smtp-port', '0', '--http-port', '0']);
    await Promise.all([ready(guarded), ready(loopback)]);
    for (const r of [open, guarded, loopback]) r.child.kill('SIGTERM');
    await Promise.all([open.exit, guarded.exit, loopback.exit]);
    expect(guarded.stderr()).toBe('');
    expect(loopback.stderr()).toBe('');
  });

  it('serves the SMTP rules by default, and not with --no-smtp-rules or MAILROOM_SMTP_RULES=0', async () => {
    const features = async (r: Run) => {
      const { apiURL } = await ready(r);
      const answer = await request(`${apiURL}/healthz`);
      return ((await answer.body.json()) as { features: Record<string, string> }).features;
    };
    const on = run(['serve', '--smtp-port', '0', '--http-port', '0']);
    const flag = run(['serve', '--smtp-port', '0', '--http-port', '0', '--no-smtp-rules']);
    const env = run(['serve', '--smtp-port', '0', '--http-port', '0'], { MAILROOM_SMTP_RULES: '0' });
    expect(await features(on)).toMatchObject({ smtp_rules: '/api/v1/mailbox/rules', smtp_attempts: '/api/v1/mailbox/attempts' });
    for (const off of [flag, env]) expect(Object.keys(await features(off))).not.toContain('smtp_rules');
    for (const r of [on, flag, env]) r.child.kill('SIGTERM');
    await Promise.all([on.exit, flag.exit, env.exit]);
    const bad = run(['serve'], { MAILROOM_SMTP_RULES: 'maybe' });
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain('MAILROOM_SMTP_RULES must be 1 (on, the default) or 0 (off), got "maybe"');
  });

  it('--webhook URL --webhook-secret S posts every event there, signed; --no-webhooks turns them off', async () => {
    const receiver = await startReceiver();
    const hooked = run(['serve', '--smtp-port', '0', '--http-port', '0', '--webhook', receiver.url, '--webhook-secret', 'cli-secret']);
    const off = run(['serve', '--smtp-port', '0', '--http-port', '0', '--no-webhooks']);
    const { smtpPort, apiURL } = await ready(hooked);
    expect(hooked.stderr()).toContain('mailroom serve: warning: --webhook-secret on the command line can be read by every user of this machine');
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true });
    await transport.sendMail({ from: 'app@example.com', to: 'cli-hook@mailroom.test', subject: 'via the cli', text: 'x' });
    transport.close();
    await receiver.waitFor(1);
    const event = verifyWebhookSignature({ body: receiver.received[0]!.body, headers: receiver.received[0]!.headers, secret: 'cli-secret' });
    expect(event).toMatchObject({ type: 'message.received', address: 'cli-hook@mailroom.test' });
    expect(((await (await request(`${apiURL}/healthz`)).body.json()) as { features: object }).features).toHaveProperty('webhooks');
    const offURL = (await ready(off)).apiURL;
    expect(((await (await request(`${offURL}/healthz`)).body.json()) as { features: object }).features).not.toHaveProperty('webhooks');
    for (const r of [hooked, off]) r.child.kill('SIGTERM');
    await Promise.all([hooked.exit, off.exit]);
    const secretAlone = run(['serve', '--webhook-secret', 'x']);
    const badURL = run(['serve', '--webhook', 'localhost:3000/hook']);
    expect(await secretAlone.exit).toBe(2);
    expect(secretAlone.stderr()).toContain('--webhook-secret (or MAILROOM_WEBHOOK_SECRET) signs the --webhook URLs, but no --webhook');
    expect(await badURL.exit).toBe(2);
    expect(badURL.stderr()).toContain('--webhook (or MAILROOM_WEBHOOK) must be an http(s) URL, got "localhost:3000/hook"');
  });

  it("--webhook-format resend: a send through Resend's SDK is posted as Resend's events, accepted by resend's own webhooks.verify", async () => {
    const receiver = await startReceiver();
    const r = run(['serve', '--smtp-port', '0', '--http-port', '0', '--webhook', receiver.url, '--webhook-format', 'resend']);
    const { apiURL } = await ready(r);
    const id = /webhook (wh_\S+) posts to/.exec(r.stderr())?.[1];
    const shown = await request(`${apiURL}/api/v1/webhooks/${id}`);
    const { secret, format } = ((await shown.body.json()) as { webhook: { secret: string; format: string } }).webhook;
    expect([format, secret]).toEqual(['resend', expect.stringMatching(/^whsec_/)]);
    const resend = new Resend('re_cli_test', { baseUrl: apiURL });
    const { data } = await resend.emails.send({ from: 'app@example.com', to: 'cli-resend@mailroom.test', subject: 'via the cli', text: 'x' });
    await receiver.waitFor(2);
    const events = receiver.received.map(({ body, headers }) => {
      const svix = { id: String(headers['svix-id']), timestamp: String(headers['svix-timestamp']), signature: String(headers['svix-signature']) };
      return resend.webhooks.verify({ payload: body, headers: svix, webhookSecret: secret }) as { type: string; data: { email_id: string } };
    });
    expect(events.map((e) => [e.type, e.data.email_id])).toEqual([
      ['email.sent', data!.id],
      ['email.delivered', data!.id],
    ]);
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
  });

  it('--token-file: the token read from a file; a webhook without a secret gets one made up, named by where to read it, never printed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-cli-token-'));
    try {
      const tokenFile = join(dir, 'token');
      writeFileSync(tokenFile, 'file-token-123\n', { mode: 0o600 });
      const r = run(['serve', '--smtp-port', '0', '--http-port', '0', '--token-file', tokenFile, '--webhook', 'http://127.0.0.1:9/hook']);
      const { apiURL } = await ready(r);
      const id = /webhook (wh_\S+) posts to http:\/\/127\.0\.0\.1:9\/hook, signed with a secret made up at start \(not shown here\)/.exec(r.stderr())?.[1];
      expect(r.stderr()).toContain(`GET ${apiURL}/api/v1/webhooks/${id} with the token answers it (its webhook.secret)`);
      expect((await request(`${apiURL}/api/v1/webhooks/${id}`)).statusCode).toBe(401);
      const shown = await request(`${apiURL}/api/v1/webhooks/${id}`, { headers: { authorization: 'Bearer file-token-123' } });
      const { secret } = ((await shown.body.json()) as { webhook: { secret: string } }).webhook;
      expect(secret).toMatch(/^whsec_/);
      expect(r.stderr()).not.toContain(secret);
      expect(r.stderr()).not.toContain('warning');
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--smtp-tls --smtp-require-tls --smtps-port: announces both SMTP ports and takes mail over STARTTLS and implicit TLS', async () => {
    const r = run(['serve', '--smtp-port', '0', '--http-port', '0', '--smtp-tls', '--smtp-require-tls', '--smtps-port', '0']);
    const { smtpPort, apiURL } = await ready(r);
    expect(r.stdout()).toMatch(/SMTP listening on 127\.0\.0\.1:\d+ for mailroom\.test \(STARTTLS required\)\n/);
    const smtpsPort = Number(/SMTPS \(implicit TLS\) listening on 127\.0\.0\.1:(\d+)\n/.exec(r.stdout())?.[1]);
    expect(smtpsPort).toBeGreaterThan(0);
    const to = 'tls@mailroom.test';
    for (const [subject, options] of [
      ['STARTTLS', { port: smtpPort, requireTLS: true }],
      ['implicit TLS', { port: smtpsPort, secure: true }],
    ] as const) {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', ...options, tls: { rejectUnauthorized: false } });
      await transport.sendMail({ from: 'app@example.com', to, subject, text: 'x' });
      transport.close();
    }
    const answer = await request(`${apiURL}/api/v1/mailbox?address=${to}`);
    const body = (await answer.body.json()) as { messages: Array<{ subject: string }> };
    expect(body.messages.map((m) => m.subject)).toEqual(['implicit TLS', 'STARTTLS']);
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
  });

  it('exits 1 with a clear message when a port is taken', async () => {
    const taken = await start();
    const r = run(['serve', '--smtp-port', String(taken.smtpPort), '--http-port', '0']);
    expect(await r.exit).toBe(1);
    expect(r.stderr()).toContain(`cannot listen for SMTP on 127.0.0.1:${taken.smtpPort}: the port is already in use`);
    expect(r.stderr()).toContain('--smtp-port');
  });

  it('exits 2 naming the bad flag or value', async () => {
    // Four processes at once: one after another, each paying Node's start-up,
    // they took 13 s on a loaded machine and once past the 60 s test timeout.
    const unknown = run(['serve', '--smtp-prot', '25']);
    const retention = run(['serve', '--retention', 'forever']);
    const port = run(['serve'], { MAILROOM_HTTP_PORT: 'eighty' });
    const command = run(['start']);
    const store = run(['serve', '--store', 'redis://:hunter2secret@127.0.0.1:1/99']);
    expect(await unknown.exit).toBe(2);
    expect(unknown.stderr()).toContain("Unknown option '--smtp-prot'");
    expect(await retention.exit).toBe(2);
    expect(retention.stderr()).toContain('--retention (or MAILROOM_RETENTION) must be a duration such as 90s, 30m, 1h or 2d, got "forever"');
    expect(await port.exit).toBe(2);
    expect(port.stderr()).toContain('MAILROOM_HTTP_PORT');
    expect(await command.exit).toBe(2);
    expect(command.stderr()).toContain('unknown command "start"');
    expect(await store.exit).toBe(2);
    expect(store.stderr()).toContain('--store (or MAILROOM_STORE): must be "memory" or a Redis URL such as "redis://127.0.0.1:6379/0"');
    // The password never shows (issue 44): masked as the connect failure masks it.
    expect(store.stderr()).toContain('got "redis://:***@127.0.0.1:1/99"');
    expect(store.stderr()).not.toContain('hunter2secret');
  });
});
