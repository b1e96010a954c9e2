// The parts startServer composes, each made by one function from the
// server's options and the parts below it: the deferral lab and its calls,
// the webhooks, the MCP endpoint and HTTP API on one HTTP server, SMTP
// intake, the static webhooks. startServer (start-server.ts) only puts them
// together and owns their lifetime.
import { createServer, type Server as HttpServer } from 'node:http';
import { MCP_WAIT_SLOTS } from '../contract/limits.js';
import { API_BASE } from '../contract/routes.js';
import { WaitSlots } from '../contract/wait-slots.js';
import { AttemptFeed } from './base/smtp-attempts.js';
import { PageWalks } from './budgets/page-walks.js';
import { createApiHandler, type ApiHandler } from './http/api.js';
import { edgePolicyOf } from './http/edge/edge-policy.js';
import { sdkRebindingOptions } from './http/mcp/dns-rebinding.js';
import { createEmbeddedTools } from './http/mcp/embedded-tools.js';
import { createMcpEndpoint } from './http/mcp/endpoint.js';
import { FaultSwitch, RequestCounter } from './http/test-hooks/faults.js';
import type { OpenedStore } from './open-store.js';
import { createLabCalls, storedIdentityIn, type LabCalls } from './rules/lab-calls.js';
import type { LabStore } from './rules/lab-store.js';
import type { ResolvedServerOptions } from './server-options.js';
import { createSmtpIntake, type SmtpIntake } from './smtp/intake.js';
import { createMailboxReader, type MailboxReader } from './store/mailbox-reader.js';
import { createWebhookService, staticWebhookId, type WebhookService } from './webhooks/webhook-service.js';

/** What every other part reads: the opened store and its budgets, and what the server keeps beside them. */
export interface CoreParts extends OpenedStore {
  readonly config: ResolvedServerOptions;
  readonly reader: MailboxReader;
  readonly faults: FaultSwitch;
  readonly counter: RequestCounter;
  readonly pageWalks: PageWalks;
  /** The long-poll's slots (undefined when it is off) and the MCP tool's. */
  readonly waitSlots: WaitSlots | undefined;
  readonly mcpSlots: WaitSlots;
  /** Every SMTP reply that decided a recipient's fate (base/smtp-attempts.ts). */
  readonly attempts: AttemptFeed;
  /** The lab and its calls, which the HTTP API and the MCP tools both answer with; undefined when `smtpRules` is off. */
  readonly smtpLab: { readonly lab: LabStore; readonly calls: LabCalls } | undefined;
}

export function coreParts(config: ResolvedServerOptions, opened: OpenedStore): CoreParts {
  const { store, messageBudget } = opened;
  const { logger } = config;
  const reader = createMailboxReader(store, config.domains);
  const attempts = new AttemptFeed((error) => logger.error(`mailroom: an SMTP attempt listener failed: ${String(error)}`));
  const lab = config.smtpRules ? opened.lab() : undefined;
  const smtpLab = lab && { lab, calls: createLabCalls({ lab, storedIdentity: storedIdentityIn(store), reader, messageBudget }) };
  if (smtpLab) {
    attempts.subscribe(
      (attempt) =>
        void Promise.resolve(smtpLab.lab.record(attempt)).catch((error: unknown) => logger.error(`mailroom: could not log an SMTP attempt: ${String(error)}`)),
    );
  }
  return {
    ...opened,
    config,
    reader,
    faults: new FaultSwitch(),
    counter: new RequestCounter(),
    pageWalks: new PageWalks(opened.listBudget.windowMs, config.clock),
    waitSlots: config.waitSlots > 0 ? new WaitSlots(config.waitSlots) : undefined,
    mcpSlots: new WaitSlots(MCP_WAIT_SLOTS),
    attempts,
    smtpLab,
  };
}

/**
 * The webhooks, when they are on: on a shared store, shared too (their
 * registrations read before the first mail is taken in). `apiURL` is known
 * once the HTTP port is bound; only a delivery, later, reads it.
 */
export async function openWebhooks(core: CoreParts, apiURL: () => string): Promise<WebhookService | undefined> {
  const { config, reader, store } = core;
  if (!config.webhooks) return undefined;
  return createWebhookService({
    store: await core.sharedWebhooks?.(),
    attempts: core.attempts,
    rawUrl: (message) => `${apiURL()}${API_BASE}/message/${message.id}/raw?mailbox=${encodeURIComponent(message.mailbox)}`,
    readSource: async (mailbox, id) => (await store.get(mailbox, id))?.content.source(),
    logRetentionMs: config.retention,
    webhookAllow: config.webhookAllow,
    mailboxKey: (address) => reader.mailboxKey(address, 'address'),
    now: () => config.clock.now(),
    random: config.random,
    logger: config.logger,
  });
}

/**
 * The HTTP API (MCP endpoint included) and the node:http server that runs
 * it, with its timeouts. `boundPort` is known once the port is bound; only a
 * request, later, reads it (the MCP SDK's rebinding lists name it).
 */
export function createHttp(
  core: CoreParts,
  webhooks: WebhookService | undefined,
  boundPort: () => number,
): { readonly api: ApiHandler; readonly http: HttpServer } {
  const { config, store, reader, listBudget, messageBudget, smtpLab } = core;
  const edge = edgePolicyOf(config);
  const mcp = createMcpEndpoint({
    rebinding: (host) => sdkRebindingOptions(edge, boundPort(), host),
    tools: createEmbeddedTools({ store, reader, listBudget, messageBudget, slots: core.mcpSlots, holdCap: config.holdCap, smtpLab: smtpLab?.calls }),
    domains: config.domains,
    logger: config.logger,
  });
  const api = createApiHandler({
    ...core,
    mcp,
    holdCap: config.holdCap,
    domains: config.domains,
    token: config.token,
    faultInjection: config.faultInjection,
    webhooks,
    logger: config.logger,
    edge,
  });
  const http = createServer(
    {
      keepAlive: true,
      headersTimeout: config.httpHeadersTimeout,
      requestTimeout: config.httpRequestTimeout,
      // node checks both timeouts on this interval (30 s by default), so a
      // slow client would otherwise outlive its timeout by up to that much.
      connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.floor(config.httpHeadersTimeout / 4))),
    },
    api.handle,
  );
  return { api, http };
}

export function createSmtp(core: CoreParts): SmtpIntake {
  const { config } = core;
  return createSmtpIntake({
    domains: config.domains,
    maxMessageBytes: config.maxMessageBytes,
    maxRecipients: config.maxRecipients,
    maxConnections: config.maxSmtpConnections,
    idleTimeout: config.smtpIdleTimeout,
    store: core.store,
    attempts: core.attempts,
    now: () => config.clock.now(),
    lab: core.smtpLab?.lab,
    logger: config.logger,
  });
}

/** The webhooks given in the options; one given without a secret has its made-up secret logged, so a receiver can check signatures. */
export async function registerStaticWebhooks(config: ResolvedServerOptions, webhooks: WebhookService | undefined): Promise<void> {
  for (const [index, given] of config.staticWebhooks.entries()) {
    try {
      const webhook = await webhooks!.register({ url: given.url, secret: given.secret, events: given.events }, { id: staticWebhookId(given, index) });
      if (given.secret === undefined) config.logger.warn(`mailroom: webhook ${webhook.id} posts to ${webhook.url}, signed with the secret ${webhook.secret}`);
    } catch (error) {
      throw new TypeError(`Invalid static webhook ${JSON.stringify(given.url)}: ${(error as Error).message}`, { cause: error });
    }
  }
}
