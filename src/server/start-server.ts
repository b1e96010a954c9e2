// startServer: wires the store, SMTP intake and the HTTP API together and owns
// their lifetime.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { MCP_WAIT_SLOTS } from '../contract/limits.js';
import { WaitSlots } from '../contract/wait-slots.js';
import type { RequestBudget } from './budgets/budget.js';
import { PageWalks } from './budgets/page-walks.js';
import { exposureWarning } from './exposure-warning.js';
import { createApiHandler } from './http/api.js';
import { FaultSwitch, RequestCounter, type FaultInjection, type RequestStats } from './http/faults.js';
import { refuseWhatNoHandlerSees } from './http/socket-refusals.js';
import { createMailboxReader } from './mailbox-reader.js';
import { createEmbeddedTools } from './mcp/embedded-tools.js';
import { createMcpEndpoint } from './mcp/endpoint.js';
import { sdkRebindingOptions } from './mcp/dns-rebinding.js';
import { edgePolicyOf } from './http/guards/edge-policy.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import { AttemptFeed } from './smtp/attempts.js';
import { createSmtpIntake } from './smtp/intake.js';
import { netServerOf } from './smtp/smtp-server-private.js';
import { createLabCalls, storedIdentityIn } from './rules/lab-calls.js';
import type { LabStore } from './rules/lab-store.js';
import { EvictionReporter } from './store/eviction.js';
import { API_BASE } from '../contract/routes.js';
import { destinationPolicy } from './webhooks/destination-policy.js';
import { createWebhookService, staticWebhookId, type WebhookService } from './webhooks/webhook-service.js';
import type { MailStore } from './store/mail-store.js';
import { openStore } from './store/open-store.js';

export interface MailroomServer {
  /** The bound SMTP port (the real one when 0 was asked). */
  readonly smtpPort: number;
  /** The bound HTTP port. */
  readonly httpPort: number;
  /** Base URL of the HTTP service, e.g. `http://127.0.0.1:8025` (the API is under `/api/v1`). */
  readonly apiURL: string;
  /** The served domains, lower-cased. */
  readonly domains: readonly string[];
  /** The fault switch (test hook): make an address's next requests fail in a chosen way. */
  readonly faults: {
    inject(injection: FaultInjection): void;
    clear(): void;
  };
  /** Every HTTP request that named `address`, refused or not. */
  stats(address: string): RequestStats;
  /** Stops both listeners and destroys every open connection. Idempotent. */
  close(): Promise<void>;
}

// Sweeping expired mail on a timer as well as on every access keeps memory
// bounded on an idle server.
const SWEEP_INTERVAL_MS = 30_000;

function hostForURL(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: NetServer | HttpServer, port: number, host: string, what: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      const reason =
        error.code === 'EADDRINUSE'
          ? 'the port is already in use'
          : error.code === 'EACCES'
            ? 'permission denied'
            : error.code === 'EADDRNOTAVAIL'
              ? 'the address is not available on this machine'
              : error.message;
      reject(
        Object.assign(new Error(`mailroom: cannot listen for ${what} on ${host}:${port}: ${reason}${error.code ? ` (${error.code})` : ''}`), {
          code: error.code,
          cause: error,
        }),
      );
    };
    const onListening = () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

function closeServer(server: NetServer | HttpServer): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
  });
}

export async function startServer(options: ServerOptions = {}): Promise<MailroomServer> {
  const config = resolveServerOptions(options);
  const { clock, logger } = config;

  const evictions = new EvictionReporter({
    clock,
    logger,
    maxMessages: config.maxMessages,
    maxStoreBytes: config.store.kind === 'memory' ? config.maxStoreBytes : undefined,
  });
  const { store, listBudget, messageBudget, lab, sharedWebhooks } = await openStore(config, {
    onEvict: (message) => evictions.record(message),
    onListenerError: (error) => logger.error(`mailroom: an arrival listener failed: ${String(error)}`),
  });
  const faults = new FaultSwitch();
  const counter = new RequestCounter();
  const pageWalks = new PageWalks(listBudget.windowMs, clock);
  const reader = createMailboxReader(store, config.domains);
  const waitSlots = config.waitSlots > 0 ? new WaitSlots(config.waitSlots) : undefined;
  const mcpSlots = new WaitSlots(MCP_WAIT_SLOTS);
  const attempts = new AttemptFeed((error) => logger.error(`mailroom: an SMTP attempt listener failed: ${String(error)}`));
  // The lab and its calls, which the HTTP API and the MCP tools both answer with.
  const labStore = config.smtpRules ? lab() : undefined;
  const smtpLab = labStore && {
    lab: labStore,
    calls: createLabCalls({ lab: labStore, storedIdentity: storedIdentityIn(store), reader, messageBudget }),
  };
  if (smtpLab) {
    attempts.subscribe(
      (attempt) =>
        void Promise.resolve(smtpLab.lab.record(attempt)).catch((error: unknown) => logger.error(`mailroom: could not log an SMTP attempt: ${String(error)}`)),
    );
  }
  // The API's base is known once the HTTP port is bound; only a delivery, later, reads it.
  let apiURL = '';
  // On a shared store the webhooks are shared too (registrations read before the first mail is taken in).
  let webhookStore;
  try {
    webhookStore = config.webhooks ? await sharedWebhooks?.() : undefined;
  } catch (error) {
    await store.close();
    throw error;
  }
  const webhooks = config.webhooks
    ? createWebhookService({
        store: webhookStore,
        attempts,
        rawUrl: (message) => `${apiURL}${API_BASE}/message/${message.id}/raw?mailbox=${encodeURIComponent(message.mailbox)}`,
        readSource: async (mailbox, id) => (await store.get(mailbox, id))?.content.source(),
        logRetentionMs: config.retention,
        destinations: destinationPolicy(config.webhookAllow),
        mailboxKey: (address) => reader.mailboxKey(address, 'address'),
        now: () => clock.now(),
        random: config.random,
        logger,
      })
    : undefined;
  const edge = edgePolicyOf(config);
  // The HTTP port is known once bound; only a request, later, reads it.
  let boundHttpPort = 0;
  const mcp = createMcpEndpoint({
    rebinding: (host) => sdkRebindingOptions(edge, boundHttpPort, host),
    tools: createEmbeddedTools({ store, reader, listBudget, messageBudget, slots: mcpSlots, holdCap: config.holdCap, smtpLab: smtpLab?.calls }),
    domains: config.domains,
    logger,
  });
  const api = createApiHandler({
    store,
    reader,
    waitSlots,
    holdCap: config.holdCap,
    mcp,
    domains: config.domains,
    listBudget,
    pageWalks,
    messageBudget,
    faults,
    counter,
    token: config.token,
    faultInjection: config.faultInjection,
    smtpLab,
    webhooks,
    logger,
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
  const refused = refuseWhatNoHandlerSees(http);
  const smtp = createSmtpIntake({
    domains: config.domains,
    maxMessageBytes: config.maxMessageBytes,
    maxRecipients: config.maxRecipients,
    maxConnections: config.maxSmtpConnections,
    idleTimeout: config.smtpIdleTimeout,
    store,
    attempts,
    now: () => clock.now(),
    lab: smtpLab?.lab,
    logger,
  });
  const smtpNet = netServerOf(smtp.server);

  let smtpPort: number;
  let httpPort: number;
  try {
    smtpPort = await listen(smtpNet, config.smtpPort, config.host, 'SMTP');
    httpPort = await listen(http, config.httpPort, config.host, 'HTTP');
  } catch (error) {
    smtp.destroyConnections();
    await Promise.all([closeServer(smtpNet), closeServer(http), webhooks?.close()]);
    await store.close();
    throw error;
  }
  apiURL = `http://${hostForURL(config.host)}:${httpPort}`;
  boundHttpPort = httpPort;
  for (const [index, given] of config.staticWebhooks.entries()) {
    try {
      const webhook = await webhooks!.register({ url: given.url, secret: given.secret, events: given.events }, { id: staticWebhookId(given, index) });
      if (given.secret === undefined) logger.warn(`mailroom: webhook ${webhook.id} posts to ${webhook.url}, signed with the secret ${webhook.secret}`);
    } catch (error) {
      smtp.destroyConnections();
      await Promise.all([closeServer(smtpNet), closeServer(http), webhooks?.close()]);
      await store.close();
      throw new TypeError(`Invalid static webhook ${JSON.stringify(given.url)}: ${(error as Error).message}`, { cause: error });
    }
  }

  const exposed = exposureWarning(config.host, config.token);
  if (exposed) logger.warn(exposed);

  // A shared store's sweep may fail while it is unreachable; the next one (or any access) catches up.
  const sweeper = setInterval(() => void Promise.resolve(store.expire()).catch(() => {}), Math.min(SWEEP_INTERVAL_MS, config.retention));
  sweeper.unref();

  let closing: Promise<void> | undefined;
  const server: MailroomServer = {
    smtpPort,
    httpPort,
    apiURL,
    domains: config.domains,
    faults: {
      inject: (injection) => faults.inject(injection),
      clear: () => void faults.clear(),
    },
    stats: (address) => counter.get(address),
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        api.close();
        evictions.flush();
        const closed = Promise.all([new Promise<void>((resolve) => smtp.server.close(() => resolve())), closeServer(http)]);
        smtp.destroyConnections();
        http.closeAllConnections();
        refused.destroyAll();
        await Promise.all([closed, webhooks?.close()]);
        await store.close();
      })();
      return closing;
    },
  };
  internals.set(server, Object.freeze({ store, attempts, smtpLab, webhooks, listBudget, messageBudget, waitSlots, mcpSlots, options: config }));
  return Object.freeze(server);
}

/** What in-process tools (benchmarks, server-side waits) may reach behind a running server. Not public API. */
export interface ServerInternals {
  readonly store: MailStore;
  /** Every SMTP reply that decided a recipient's fate (smtp/attempts.ts). */
  readonly attempts: AttemptFeed;
  /** The SMTP deferral lab's rules and attempt log, where they are kept (undefined when `smtpRules` is off). */
  readonly smtpLab: { readonly lab: LabStore } | undefined;
  /** The webhooks (undefined when `webhooks` is off). */
  readonly webhooks: WebhookService | undefined;
  /** A server-side wait draws on the same per-address list budget as list calls. */
  readonly listBudget: RequestBudget;
  readonly messageBudget: RequestBudget;
  /** The long-poll's slots (undefined when it is off) and the MCP tool's 8. */
  readonly waitSlots: WaitSlots | undefined;
  readonly mcpSlots: WaitSlots;
  readonly options: ResolvedServerOptions;
}

const internals = new WeakMap<MailroomServer, ServerInternals>();

export function internalsOf(server: MailroomServer): ServerInternals {
  const found = internals.get(server);
  if (!found) throw new TypeError('Expected a server returned by startServer()');
  return found;
}
