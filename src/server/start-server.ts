// startServer: composes the parts (server-parts.ts) - the store, SMTP
// intake, the HTTP API, the webhooks - binds the listeners (SMTP, the
// implicit-TLS port when asked for, HTTP; listeners.ts) and owns their
// lifetime. No decision is made here.
import { providerSettings, type ProviderSettings } from '../contract/provider-settings.js';
import type { WaitSlots } from '../contract/wait-slots.js';
import type { AttemptFeed } from './base/smtp-attempts.js';
import type { RequestBudget } from './budgets/budget.js';
import { exposureWarning } from './exposure-warning.js';
import { refuseWhatNoHandlerSees } from './http/edge/socket-refusals.js';
import type { FaultInjection, RequestStats } from './http/test-hooks/faults.js';
import { closeServer, hostForURL, listen } from './listeners.js';
import { openStore } from './open-store.js';
import type { LabStore } from './rules/lab-store.js';
import { resolveServerOptions, type ResolvedServerOptions, type ServerOptions } from './server-options.js';
import { coreParts, createHttp, createSmtp, openWebhooks, registerStaticWebhooks, smtpTlsFeature } from './server-parts.js';
import { netServerOf } from './smtp/smtp-server-private.js';
import { EvictionReporter } from './store/eviction.js';
import type { MailStore } from './store/mail-store.js';
import type { WebhookService } from './webhooks/webhook-service.js';

export interface MailroomServer {
  /** The bound SMTP port (the real one when 0 was asked). */
  readonly smtpPort: number;
  /** The bound implicit-TLS SMTP port (`smtpsPort`); undefined when none was asked for. */
  readonly smtpsPort: number | undefined;
  /**
   * The certificate (PEM) SMTP over TLS presents, the one given or the one
   * made at start; undefined when TLS is off. A client that verifies
   * certificates trusts the made one when given it as its CA.
   */
  readonly smtpTlsCertificate: string | undefined;
  /** The bound HTTP port. */
  readonly httpPort: number;
  /** Base URL of the HTTP service, e.g. `http://127.0.0.1:8025` (the API is under `/api/v1`). */
  readonly apiURL: string;
  /** The served domains, lower-cased. */
  readonly domains: readonly string[];
  /**
   * How an app's provider SDK is pointed at this server (Resend, SES,
   * SendGrid, Postmark, Mailgun, Brevo: docs/providers.md), e.g.
   * `{ ...process.env, ...server.providers.env }` for the app's process;
   * undefined when `providerApis` is off.
   */
  readonly providers: ProviderSettings | undefined;
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

export async function startServer(options: ServerOptions = {}): Promise<MailroomServer> {
  const config = resolveServerOptions(options);
  const { clock, logger } = config;
  const evictions = new EvictionReporter({
    clock,
    logger,
    maxMessages: config.maxMessages,
    maxStoreBytes: config.store.kind === 'memory' ? config.maxStoreBytes : undefined,
  });
  const opened = await openStore(config, {
    onEvict: (message) => evictions.record(message),
    onListenerError: (error) => logger.error(`mailroom: an arrival listener failed: ${String(error)}`),
  });
  const core = coreParts(config, opened);
  const { store, faults, counter } = core;
  let apiURL = '';
  const webhooks = await openWebhooks(core, () => apiURL).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const smtp = await createSmtp(core).catch(async (error: unknown) => {
    await webhooks?.close();
    await store.close();
    throw error;
  });
  let boundHttpPort = 0;
  let boundSmtpsPort: number | undefined = undefined;
  const { api, http, checkThreads } = createHttp(
    core,
    webhooks,
    () => boundHttpPort,
    () => smtpTlsFeature(config, boundSmtpsPort),
  );
  const refused = refuseWhatNoHandlerSees(http);
  const smtpNet = netServerOf(smtp.server);
  const smtpsNet = smtp.secureServer && netServerOf(smtp.secureServer);
  /** Undoes a start that failed half-way. */
  const abandon = async (error: unknown): Promise<never> => {
    smtp.destroyConnections();
    await Promise.all([closeServer(smtpNet), smtpsNet && closeServer(smtpsNet), closeServer(http), webhooks?.close(), checkThreads.close()]);
    await store.close();
    throw error;
  };

  const [smtpPort, smtpsPort, httpPort] = await listen(smtpNet, config.smtpPort, config.host, 'SMTP')
    .then(async (smtpPort) => [smtpPort, smtpsNet && (await listen(smtpsNet, config.smtpsPort!, config.host, 'SMTPS'))] as const)
    .then(async ([smtpPort, smtpsPort]) => [smtpPort, smtpsPort, await listen(http, config.httpPort, config.host, 'HTTP')] as const)
    .catch(abandon);
  apiURL = `http://${hostForURL(config.host)}:${httpPort}`;
  boundHttpPort = httpPort;
  boundSmtpsPort = smtpsPort;
  await registerStaticWebhooks(config, webhooks, apiURL).catch(abandon);

  const exposed = exposureWarning(config.host, config.token);
  if (exposed) logger.warn(exposed);
  // A shared store's sweep may fail while it is unreachable; the next one (or any access) catches up.
  const sweeper = setInterval(() => void Promise.resolve(store.expire()).catch(() => {}), Math.min(SWEEP_INTERVAL_MS, config.retention));
  sweeper.unref();

  let closing: Promise<void> | undefined;
  const close = async () => {
    clearInterval(sweeper);
    api.close();
    evictions.flush();
    const closed = Promise.all([
      new Promise<void>((resolve) => smtp.server.close(() => resolve())),
      smtp.secureServer && new Promise<void>((resolve) => smtp.secureServer!.close(() => resolve())),
      closeServer(http),
    ]);
    smtp.destroyConnections();
    http.closeAllConnections();
    refused.destroyAll();
    await Promise.all([closed, webhooks?.close(), checkThreads.close()]);
    await store.close();
  };
  const server: MailroomServer = {
    smtpPort,
    smtpsPort,
    smtpTlsCertificate: smtp.certificate,
    httpPort,
    apiURL,
    domains: config.domains,
    providers: config.providerApis ? providerSettings(apiURL) : undefined,
    faults: {
      inject: (injection) => faults.inject(injection),
      clear: () => void faults.clear(),
    },
    stats: (address) => counter.get(address),
    close: () => (closing ??= close()),
  };
  const { attempts, smtpLab, listBudget, messageBudget, waitSlots, mcpSlots } = core;
  internals.set(server, Object.freeze({ store, attempts, smtpLab, webhooks, listBudget, messageBudget, waitSlots, mcpSlots, options: config }));
  return Object.freeze(server);
}

/** What in-process tools (benchmarks, server-side waits) may reach behind a running server. Not public API. */
export interface ServerInternals {
  readonly store: MailStore;
  /** Every SMTP reply that decided a recipient's fate (base/smtp-attempts.ts). */
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
