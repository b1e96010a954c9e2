// `mailroom mcp`: the MCP tools over stdio, for agents configured with a
// command rather than a URL, in front of any service that speaks the mailbox
// HTTP API (the embedded server or a hosted one of the same shape).
//
// `wait_for_message` is the client's own wait: an inbox whose watermark is
// `since_id`, and `expectMail` with the filters. So the client's loop runs here
// (deadline, pacing, Retry-After, the watermark walk), the service's long-poll
// is used when it advertises one, and polling is the fallback.
//
// The SMTP deferral lab's tools are offered when the service's `/healthz`
// advertises `features.smtp_rules` and `smtp_attempts`; they call the
// service's HTTP API, which checks the rules. A service not up yet when the
// proxy starts is asked again every few seconds until it answers, and the
// tools are added then (the client is told that the tool list changed).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { MailroomClient } from '../client/client.js';
import { isTransient, MailroomApiError, MailroomError } from '../client/errors.js';
import type { MailSummary, MessageDetail } from '../client/messages.js';
import type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
import { MAX_WAIT_SECONDS, MCP_WAIT_SLOTS, MCP_WHEN_SLOTS_ARE_FULL } from '../contract/limits.js';
import { Refusal, type RefusalSlug } from '../contract/refusal.js';
import { WaitSlots } from '../contract/wait-slots.js';
import type { WireMessage, WireSmtpAttempt, WireSmtpRule, WireSmtpRuleInput, WireSummary } from '../contract/wire.js';
import { createInbox } from '../inbox/inbox.js';
import { MailTimeoutError } from '../inbox/wait-errors.js';
import { createMcpServer } from '../mcp/mcp-server.js';
import { registerSmtpLabTools } from '../mcp/smtp-lab-tools.js';
import type { MailTools, SmtpLabTools } from '../mcp/tools.js';

function wireSummary(s: MailSummary): WireSummary {
  return { id: s.id, from: s.from, to: s.to, subject: s.subject, preview: s.preview, received_at: s.receivedAt.toISOString(), size: s.size };
}

function wireMessage(m: MessageDetail): WireMessage {
  return {
    ...wireSummary(m),
    message_id: m.messageId,
    cc: m.cc,
    date: m.date ? m.date.toISOString() : null,
    headers: m.headers,
    text: m.text === '' ? null : m.text,
    html: m.html === '' ? null : m.html,
    attachments: m.attachments.map((a) => ({ filename: a.filename, content_type: a.contentType, size: a.size, content_id: a.contentId })),
  };
}

/** A rule as the HTTP API shows it (the client camel-cases it). */
function wireRule(r: SmtpRule): WireSmtpRule {
  const head = { id: r.id, set_at: r.setAt.toISOString(), remaining: r.remaining };
  switch (r.kind) {
    case 'greylist':
      return { ...head, kind: r.kind, min_delay_ms: r.minDelay, reset_on_early_retry: r.resetOnEarlyRetry };
    case 'throttle':
      return { ...head, kind: r.kind, limit: r.limit, per_ms: r.per };
    case 'defer':
    case 'reject':
      return { ...head, kind: r.kind, code: r.code, enhanced_code: r.enhanced, text: r.text, stage: r.stage, times: r.times };
    case 'slow':
      return { ...head, kind: r.kind, delay_ms: r.delayMs, stage: r.stage, times: r.times };
    case 'disconnect':
      return { ...head, kind: r.kind, stage: r.stage, times: r.times };
    case 'rate_limit':
      return { ...head, kind: r.kind, retry_after_ms: r.retryAfter, stage: r.stage, times: r.times };
    case 'unavailable':
      return { ...head, kind: r.kind, status: r.status, stage: r.stage, times: r.times };
  }
}

/** An attempt as the HTTP API shows it. */
function wireAttempt(a: SmtpAttempt): WireSmtpAttempt {
  return {
    at: a.at.toISOString(),
    began_at: a.beganAt ? a.beganAt.toISOString() : null,
    client_ip: a.clientIp,
    from: a.from,
    to: a.to,
    stage: a.stage,
    code: a.code,
    enhanced_code: a.enhancedCode,
    text: a.text,
    outcome: a.outcome,
    rule: a.rule,
    message_id: a.messageId,
    subject: a.subject,
    stored_id: a.storedId,
    provider: a.provider,
    user_agent: a.userAgent,
    retry_after_ms: a.retryAfterMs,
  };
}

/** The service's refusal as the tool's: same slug, its message, its Retry-After. */
function asRefusal(error: unknown): unknown {
  if (error instanceof MailroomApiError) {
    const headers: Record<string, string> =
      error.retryAfterMs === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))) };
    // The service's own slug, passed through as the service chose it.
    return new Refusal(error.status, error.slug as RefusalSlug, error.serverMessage ?? error.message, headers);
  }
  if (error instanceof MailroomError) return new Refusal(502, 'unavailable', error.message);
  return error;
}

async function refused<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asRefusal(error);
  }
}

/** The tools, answered by the service at `client`. */
export function createProxyTools(client: MailroomClient, slots = new WaitSlots(MCP_WAIT_SLOTS)): MailTools {
  return {
    maxWaitSeconds: MAX_WAIT_SECONDS,
    listMessages: (address, limit, signal) =>
      refused(async () => {
        const listing = await client.listMessages(address, { limit, signal });
        return { address: listing.address, messages: listing.messages.map(wireSummary) };
      }),
    getMessage: (address, id, signal) => refused(async () => wireMessage(await client.getMessage(address, id, { signal }))),
    deleteMessage: (address, id, signal) => refused(async () => ({ deleted: await client.deleteMessage(address, id, { signal }) })),
    addressDomains: (signal) =>
      refused(async () => {
        // `/healthz` names no domains for a catch-all service: any domain takes mail there.
        const { domains } = await client.features({ signal });
        return domains ? { domains, anyDomain: false } : { domains: [], anyDomain: true };
      }),
    // A list call: the service's budget is the service's to keep; the wait
    // that follows paces itself to the Retry-After if it comes too soon.
    newestId: (address, signal) => refused(async () => (await client.listMessages(address, { limit: 1, signal })).messages[0]?.id ?? null),
    // The source as the client reads it (UTF-8 text): attachments travel
    // base64- or quoted-printable-encoded, which that leaves intact.
    rawMessage: (address, id, signal) => refused(async () => Buffer.from(await client.getRawMessage(address, id, { signal }))),
    async waitForMessage(args, signal) {
      const release = slots.take(MCP_WHEN_SLOTS_ARE_FULL);
      const started = performance.now();
      const waited = () => Math.round(performance.now() - started) / 1000;
      try {
        const inbox = await refused(async () => {
          try {
            return await createInbox({ client, address: args.address, watermark: args.since_id || null, signal });
          } catch (error) {
            // The inbox checks the address before asking anything: the service's slug for it.
            if (error instanceof TypeError && /`address`/.test(error.message)) {
              throw new Refusal(400, 'invalid_address', `${JSON.stringify(args.address)} is not a well-formed email address, so it can never receive mail`);
            }
            throw error;
          }
        });
        const filter = {
          ...(args.from_contains ? { from: args.from_contains } : {}),
          ...(args.subject_contains ? { subject: args.subject_contains } : {}),
        };
        try {
          const mail = await inbox.expectMail(filter, { timeout: args.timeout_seconds * 1000, signal });
          return { timed_out: false, waited_seconds: waited(), message: wireMessage(mail) };
        } catch (error) {
          if (error instanceof MailTimeoutError && !error.cutShort) return { timed_out: true, waited_seconds: waited() };
          throw asRefusal(error);
        }
      } finally {
        release();
      }
    },
  };
}

/** The lab's tools, answered by the service at `client` (which checks every rule). */
export function createProxyLabTools(client: MailroomClient): SmtpLabTools {
  return {
    addRule: (address, rule, signal) =>
      refused(async () => {
        // Sent as given: the service's parser is the one that checks it and names a bad field.
        const added = await client.addSmtpRule(address, rule as unknown as WireSmtpRuleInput, { signal });
        return { address, rule: wireRule(added.rule), rules: added.rules.map(wireRule) };
      }),
    rules: (address, signal) => refused(async () => ({ address, rules: (await client.smtpRules(address, { signal })).map(wireRule) })),
    clearRules: (address, signal) => refused(async () => ({ cleared: await client.clearSmtpRules(address, { signal }) })),
    attempts: (address, signal) => refused(async () => ({ address, attempts: (await client.smtpAttempts(address, { signal })).map(wireAttempt) })),
  };
}

/** How long the first look at `/healthz` may take before the proxy serves without the lab's tools (and keeps asking). */
const FIRST_LOOK_TIMEOUT_MS = 2_000;
/** How often a service that could not be reached is asked again for its features. */
const LOOK_AGAIN_MS = 3_000;

/**
 * Whether the service offers the lab: true or false once it answered
 * `/healthz`, undefined when it could not be reached (or answered 5xx/429).
 */
export async function offersSmtpLab(client: MailroomClient, timeout: number): Promise<boolean | undefined> {
  try {
    await client.health({ timeout });
  } catch (error) {
    // A service without /healthz (404) offers no extensions; trouble may pass.
    return isTransient(error) ? undefined : false;
  }
  const features = await client.features();
  return features.smtpRules !== undefined && features.smtpAttempts !== undefined;
}

/**
 * Asks again every `intervalMs` until the service answers, then adds the
 * lab's tools when it offers them (the SDK tells a connected client the
 * list changed). Returns a function that stops asking.
 */
export function addSmtpLabToolsOnceOffered(server: McpServer, client: MailroomClient, intervalMs = LOOK_AGAIN_MS): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    const offered = await offersSmtpLab(client, FIRST_LOOK_TIMEOUT_MS);
    if (stopped) return;
    if (offered === undefined) {
      timer = setTimeout(() => void look(), intervalMs);
      timer.unref();
    } else if (offered) registerSmtpLabTools(server, createProxyLabTools(client));
  };
  timer = setTimeout(() => void look(), intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export interface StdioProxyOptions {
  readonly apiURL: string;
  readonly token?: string | undefined;
}

/** Serves the tools on stdin/stdout until stdin closes. */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const client = new MailroomClient({ apiURL: options.apiURL, token: options.token });
  const offered = await offersSmtpLab(client, FIRST_LOOK_TIMEOUT_MS);
  const tools = { ...createProxyTools(client), smtpLab: offered ? createProxyLabTools(client) : undefined };
  const server = createMcpServer(tools, { apiURL: client.apiURL });
  const stopLooking = offered === undefined ? addSmtpLabToolsOnceOffered(server, client) : undefined;
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', () => resolve());
    process.stdin.once('close', () => resolve());
  });
  await server.connect(transport);
  await closed;
  stopLooking?.();
  await server.close();
}
