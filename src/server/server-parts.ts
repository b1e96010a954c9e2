// The parts startServer composes, each made by one function from the
// server's options and the parts below it: the deferral lab and its calls,
// the webhooks, the MCP endpoint and HTTP API on one HTTP server, SMTP
// intake, the static webhooks. startServer (start-server.ts) only puts them
// together and owns their lifetime.
import { createServer, type Server as HttpServer } from 'node:http';
import { MCP_WAIT_SLOTS } from '../contract/limits.js';
import { API_BASE, WEBHOOKS_PATH } from '../contract/routes.js';
import { describeValue } from '../contract/validation.js';
import { WaitSlots } from '../contract/wait-slots.js';
import type { WireSmtpTls } from '../contract/wire.js';
import { AttemptFeed } from './base/smtp-attempts.js';
import { PageWalks } from './budgets/page-walks.js';
import { createApiHandler, type ApiHandler } from './http/api.js';
import { edgePolicyOf } from './http/edge/edge-policy.js';
import { sdkRebindingOptions } from './http/mcp/dns-rebinding.js';
import { createEmbeddedTools } from './http/mcp/embedded-tools.js';
import { createMcpEndpoint } from './http/mcp/endpoint.js';
import { FaultSwitch, RequestCounter } from './http/test-hooks/faults.js';
import { CheckThreads } from './mail-checks/check-threads.js';
import type { OpenedStore } from './open-store.js';
import { createLabCalls, storedIdentityIn, type LabCalls } from './rules/lab-calls.js';
import type { LabStore } from './rules/lab-store.js';
import type { ResolvedServerOptions } from './server-options.js';
import { createSmtpIntake, type SmtpIntake, type SmtpTlsOptions } from './smtp/intake.js';
import type { ProviderCallsContext } from './http/providers/answer-provider.js';
import { bodyCapFor } from './http/providers/request-body.js';
import { ApiIntake } from './providers/api-intake.js';
import { selfSignedCertificate } from './smtp/tls-certificate.js';
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
  const reader = createMailboxReader(store, config.domains, config.catchAll);
  const attempts = new AttemptFeed((error) => logger.error(`mailroom: an SMTP attempt listener failed: ${String(error)}`));
  const lab = config.smtpRules ? opened.lab() : undefined;
  const smtpLab = lab && { lab, calls: createLabCalls({ lab, storedIdentity: storedIdentityIn(store), reader, messageBudget }) };
  if (smtpLab) {
    attempts.subscribe(
      (attempt, message) =>
        void Promise.resolve(smtpLab.lab.record(attempt, message)).catch((error: unknown) =>
          logger.error(`mailroom: could not log an SMTP attempt: ${String(error)}`),
        ),
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
    apiUrl: apiURL,
    readSource: async (mailbox, id) => (await store.get(mailbox, id))?.content.latin1(),
    logRetentionMs: config.retention,
    webhookAllow: config.webhookAllow,
    mailboxKey: (address) => reader.mailboxKey(address, 'address'),
    now: () => config.clock.now(),
    random: config.random,
    logger: config.logger,
  });
}

/**
 * The HTTP API (MCP endpoint included), the node:http server that runs it,
 * with its timeouts, and the threads its mail checks run in. `boundPort` is
 * known once the port is bound, and `smtpTls` (what `/healthz` says of SMTP
 * over TLS) once the implicit-TLS port is; only a request, later, reads them
 * (the MCP SDK's rebinding lists name the port).
 */
export function createHttp(
  core: CoreParts,
  webhooks: WebhookService | undefined,
  boundPort: () => number,
  smtpTls: () => WireSmtpTls | undefined,
): { readonly api: ApiHandler; readonly http: HttpServer; readonly checkThreads: CheckThreads } {
  const { config, store, reader, listBudget, messageBudget, smtpLab } = core;
  const checkThreads = new CheckThreads({ deadlineMs: config.checksTimeout });
  const edge = edgePolicyOf(config);
  const mcp = createMcpEndpoint({
    rebinding: (host) => sdkRebindingOptions(edge, boundPort(), host),
    tools: createEmbeddedTools({
      store,
      reader,
      listBudget,
      messageBudget,
      slots: core.mcpSlots,
      domains: config.domains,
      catchAll: config.catchAll,
      holdCap: config.holdCap,
      smtpLab: smtpLab?.calls,
    }),
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
    linkCheckAllow: config.linkCheckAllow,
    webhooks,
    logger: config.logger,
    edge,
    smtpTls,
    catchAll: config.catchAll,
    providers: config.providerApis ? providerCalls(core) : undefined,
    checkThreads,
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
  return { api, http, checkThreads };
}

/** The provider APIs' intake: the same store, lab, attempt feed and limits as SMTP's. */
function providerCalls(core: CoreParts): ProviderCallsContext {
  const { config } = core;
  const now = () => config.clock.now();
  const intake = new ApiIntake({
    store: core.store,
    attempts: core.attempts,
    lab: core.smtpLab?.lab,
    domains: config.domains,
    catchAll: config.catchAll,
    maxMessageBytes: config.maxMessageBytes,
    maxRecipients: config.maxRecipients,
    now,
    logger: config.logger,
  });
  return { intake, bodyCap: bodyCapFor(config.maxMessageBytes), now };
}

/**
 * SMTP intake, on the SMTP port and, when asked, the implicit-TLS port. The
 * certificate is the one given, or one made for this process (made when TLS
 * is asked for only: `selfsigned` is not even loaded otherwise).
 */
export async function createSmtp(core: CoreParts): Promise<SmtpIntake> {
  const { config } = core;
  return createSmtpIntake({
    domains: config.domains,
    catchAll: config.catchAll,
    maxMessageBytes: config.maxMessageBytes,
    maxRecipients: config.maxRecipients,
    maxConnections: config.maxSmtpConnections,
    idleTimeout: config.smtpIdleTimeout,
    store: core.store,
    attempts: core.attempts,
    now: () => config.clock.now(),
    lab: core.smtpLab?.lab,
    tls: await smtpTlsOf(config),
    logger: config.logger,
  });
}

/** What `/healthz` says of SMTP over TLS (`features.smtp_tls`): undefined when it is off. */
export function smtpTlsFeature(config: ResolvedServerOptions, smtpsPort: number | undefined): WireSmtpTls | undefined {
  if (!config.smtpTls && smtpsPort === undefined) return undefined;
  return { starttls: config.smtpTls, required: config.smtpRequireTls, ...(smtpsPort === undefined ? {} : { smtps_port: smtpsPort }) };
}

async function smtpTlsOf(config: ResolvedServerOptions): Promise<SmtpTlsOptions | undefined> {
  const implicit = config.smtpsPort !== undefined;
  if (!config.smtpTls && !implicit) return undefined;
  const certificate = config.smtpTlsCertificate ?? (await selfSignedCertificate());
  return { certificate, starttls: config.smtpTls, required: config.smtpRequireTls, implicit };
}

/**
 * The webhooks given in the options. One given without a secret gets one made
 * up, and the log says where to read it (the API shows it to whoever may call
 * the API), never the secret itself: logs end up in CI output.
 */
export async function registerStaticWebhooks(config: ResolvedServerOptions, webhooks: WebhookService | undefined, apiURL: string): Promise<void> {
  for (const [index, given] of config.staticWebhooks.entries()) {
    try {
      const webhook = await webhooks!.register(
        { url: given.url, secret: given.secret, events: given.events, ...(given.format === undefined ? {} : { format: given.format }) },
        { id: staticWebhookId(given, index) },
      );
      // An ses webhook (and a postmark one without credentials) has no secret: nothing to say.
      if (given.secret === undefined && webhook.secret !== '') {
        config.logger.warn(
          `mailroom: webhook ${webhook.id} posts to ${webhook.url}, signed with a secret made up at start (not shown here): GET ${apiURL}${WEBHOOKS_PATH}/${webhook.id}${config.token === undefined ? '' : ' with the token'} answers it (its webhook.secret)`,
        );
      }
    } catch (error) {
      throw new TypeError(`Invalid static webhook ${describeValue(given.url)}: ${(error as Error).message}`, { cause: error });
    }
  }
}
