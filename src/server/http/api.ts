// The HTTP API (docs/CONTRACT.md), on node:http directly: the route table
// (routes.ts) names what a request is for, the edge (edge/edge.ts) checks
// it, and one handler per route kind answers it from its route group's
// folder. Every request takes that one way; a route group never sees a
// request the edge refused.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Refusal } from '../../contract/refusal.js';
import {
  ATTEMPTS_PATH,
  EVENTS_PATH,
  MAILBOXES_PATH,
  MCP_PATH,
  METRICS_PATH,
  PAGING_PARAM,
  RULES_PATH,
  UI_PATH,
  WAIT_PATH,
  WEBHOOKS_PATH,
} from '../../contract/routes.js';
import type { WaitSlots } from '../../contract/wait-slots.js';
import type { WireHealth, WireSmtpTls } from '../../contract/wire.js';
import type { Logger } from '../base/log.js';
import type { RequestBudget } from '../budgets/budget.js';
import type { PageWalks } from '../budgets/page-walks.js';
import type { CheckThreads } from '../mail-checks/check-threads.js';
import type { LabCalls } from '../rules/lab-calls.js';
import type { LabStore } from '../rules/lab-store.js';
import type { MailStore } from '../store/mail-store.js';
import type { MailboxReader } from '../store/mailbox-reader.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { dressResponse, edgeChecks, firstRefusal } from './edge/edge.js';
import type { EdgePolicy } from './edge/edge-policy.js';
import { json, refusalReply, type Reply } from './edge/reply.js';
import { answerSmtpLab } from './lab/smtp-lab.js';
import { createMailboxCalls, type ApiCall, type MailboxCalls } from './mailbox/mailbox-calls.js';
import type { McpEndpoint } from './mcp/endpoint.js';
import { route, type Route, type ServedRoutes } from './routes.js';
import type { FaultSwitch, RequestCounter } from './test-hooks/faults.js';
import { answerFaults, answerStats, answerWithFaults, countCall, type FaultedReply, type TestHooks } from './test-hooks/hook-routes.js';
import { answerMailboxIndex } from './web-ui/mailbox-index.js';
import { createEventStreams, type EventStreams } from './web-ui/event-stream.js';
import { uiAssetReply } from './web-ui/ui-assets.js';
import { answerMetrics, answerWebhooks } from './webhooks/webhooks.js';
import { answerProviderEventReport, answerSns } from './webhooks/provider-events.js';
import { answerProvider, type ProviderCallsContext } from './providers/answer-provider.js';
import { PROVIDER_NAMES_SERVED } from './providers/provider-table.js';
import { ReplyWriter } from './write-reply.js';

export interface ApiContext {
  readonly store: MailStore;
  readonly reader: MailboxReader;
  readonly domains: readonly string[];
  /** The long-poll's slots; when undefined the long-poll is neither served nor advertised. */
  readonly waitSlots: WaitSlots | undefined;
  /** The longest a long-poll is held, in ms (the server's `holdCap`). */
  readonly holdCap: number;
  readonly mcp: McpEndpoint;
  readonly listBudget: RequestBudget;
  /** Which pages continue a listing, and so are not charged. */
  readonly pageWalks: PageWalks;
  readonly messageBudget: RequestBudget;
  /** Where a message's checks run (a thread of their own, with a deadline). */
  readonly checkThreads: CheckThreads;
  readonly faults: FaultSwitch;
  readonly counter: RequestCounter;
  readonly token: string | undefined;
  readonly faultInjection: boolean;
  /** The SMTP deferral lab's rules and attempt log, and its calls; when undefined neither is served nor advertised. */
  readonly smtpLab: { readonly lab: LabStore; readonly calls: LabCalls } | undefined;
  /** The webhooks; when undefined they are neither served nor advertised. */
  readonly webhooks: WebhookService | undefined;
  readonly logger: Logger;
  /** The names and origins a browser may reach the server by (edge/edge-policy.ts). */
  readonly edge: EdgePolicy;
  /** The loopback and private hosts the links check may reach (`linkCheckAllow`). */
  readonly linkCheckAllow: readonly string[];
  /** SMTP over TLS as offered, advertised when defined; asked per request, as the implicit-TLS port is known once bound. */
  readonly smtpTls: () => WireSmtpTls | undefined;
  /** Every domain's mail is taken and every address read (healthz says so). */
  readonly catchAll: boolean;
  /** The provider APIs' intake; when undefined their paths are not served. */
  readonly providers: ProviderCallsContext | undefined;
}

export interface ApiHandler {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Cancels answers still held back by a `slow` fault, ends held long-polls and open streams. */
  readonly close: () => void;
}

/** What a route's handler is given besides its route. */
interface RouteRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly params: URLSearchParams;
}

/** A route kind's handler: its answer, or undefined when it wrote the response itself (MCP, the event stream). */
type RouteHandler<R extends Route> = (route: R, request: RouteRequest) => Promise<FaultedReply> | undefined;
type RouteHandlers = { readonly [K in Route['kind']]: RouteHandler<Extract<Route, { readonly kind: K }>> };

/** Discovery: a client that finds `features.wait` here may use the long-poll; a service without it simply does not say so. */
function healthOf(ctx: ApiContext): WireHealth {
  const smtpTls = ctx.smtpTls();
  return {
    ok: true,
    domains: ctx.domains,
    ...(ctx.catchAll ? { catch_all: true } : {}),
    features: {
      ...(ctx.waitSlots ? { wait: WAIT_PATH } : {}),
      mcp: MCP_PATH,
      paging: PAGING_PARAM,
      ...(ctx.smtpLab ? { smtp_rules: RULES_PATH, smtp_attempts: ATTEMPTS_PATH } : {}),
      ...(ctx.webhooks ? { webhooks: WEBHOOKS_PATH, metrics: METRICS_PATH } : {}),
      ui: UI_PATH,
      mailboxes: MAILBOXES_PATH,
      events: EVENTS_PATH,
      ...(smtpTls ? { smtp_tls: smtpTls } : {}),
      ...(ctx.providers ? { providers: PROVIDER_NAMES_SERVED } : {}),
    },
  };
}

const answered = (reply: Reply): FaultedReply => ({ reply });

/** The route table's handlers, one per route kind, each handing the request to its route group. */
function routeHandlers(ctx: ApiContext, mailbox: MailboxCalls, events: EventStreams, hooks: TestHooks, closing: AbortSignal): RouteHandlers {
  /** Aborted when the caller hangs up or the server closes. */
  const heldSignal = (res: ServerResponse): AbortSignal => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    return AbortSignal.any([gone.signal, closing]);
  };
  /** For a held call (a long-poll, the checks): aborted when the caller hangs up or the server closes. */
  const signalFor = (call: ApiCall, res: ServerResponse): AbortSignal => (call !== 'wait' && call !== 'checks' ? closing : heldSignal(res));
  return {
    healthz: () => Promise.resolve(answered(json(200, healthOf(ctx)))),
    ui: ({ path }) => uiAssetReply(path).then(answered),
    mailboxes: (_, { params }) => answerMailboxIndex(params, ctx.store, ctx.reader).then((body) => answered(json(200, body))),
    events: (_, { params, res }) => void events.open(params, res),
    mcp: (_, { req, res }) => void ctx.mcp.handle(req, res),
    api: ({ call, id }, { params, req, res }) => answerWithFaults(hooks, call, params, () => mailbox({ call, id, params, req, signal: signalFor(call, res) })),
    smtpLab: ({ call }, { params, req }) => answerSmtpLab(call, params, req, ctx.smtpLab!.calls).then((body) => answered(json(200, body))),
    webhooks: (route, { params, req }) =>
      answerWebhooks(route.call, route, params, req, { webhooks: ctx.webhooks!, reader: ctx.reader }).then(({ status, body }) => answered(json(status, body))),
    metrics: () => answerMetrics(ctx.webhooks!).then(answered),
    providerEvent: (_, { req }) => answerProviderEventReport(req, ctx.webhooks!, ctx.reader).then((body) => answered(json(202, body))),
    sns: ({ call }, { params }) => answerSns(call, params, ctx.webhooks!).then(answered),
    faults: ({ method }, { req }) => answerFaults(hooks, method, req).then(answered),
    stats: (_, { params }) => Promise.resolve(answered(answerStats(hooks, params))),
    // A dropped call (a disconnect rule) has no answer: its response is destroyed, and the writer writes nothing to it.
    provider: ({ operation }, { req, res }) =>
      answerProvider(ctx.providers!, operation, req, res, heldSignal(res)).then((reply) => answered(reply ?? json(500, {}))),
  };
}

export function createApiHandler(ctx: ApiContext): ApiHandler {
  const writer = new ReplyWriter();
  /** Aborted by close(): held long-polls end and free their slots. */
  const closing = new AbortController();
  const events = createEventStreams(ctx.store, ctx.reader);
  const hooks: TestHooks = { faults: ctx.faults, counter: ctx.counter };
  const mailbox = createMailboxCalls({
    ...ctx,
    // The lab's rules and attempt log belong to the mailbox and go with it, and so do the webhooks scoped to it.
    onMailboxDeleted: async (key) => {
      if (ctx.smtpLab) await ctx.smtpLab.lab.forget(key);
      await ctx.webhooks?.removeScopedTo(key);
    },
  });
  const handlers = routeHandlers(ctx, mailbox, events, hooks, closing.signal);
  const checks = edgeChecks({ token: ctx.token, policy: ctx.edge });
  const served: ServedRoutes = {
    faultInjection: ctx.faultInjection,
    providerApis: ctx.providers !== undefined,
    longPoll: ctx.waitSlots !== undefined,
    smtpRules: ctx.smtpLab !== undefined,
    webhooks: ctx.webhooks !== undefined,
  };

  function errorReply(error: unknown): Reply {
    if (error instanceof Refusal) return refusalReply(error);
    ctx.logger.error(`mailroom: HTTP handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return json(500, { error: 'internal_error', message: 'The server failed to answer; this is a bug in mailroom, the log has the details' });
  }

  /** Matches the route, passes the edge, and hands the request to its route's handler. */
  function dispatch(req: IncomingMessage, res: ServerResponse): Promise<FaultedReply> | undefined {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    const matched = route(method, path, served);
    const refusal = firstRefusal(checks, { method, path, headers: req.headers, routeKind: matched.kind });
    if (refusal) throw refusal;
    // Counted once the edge let it through, before the call can refuse it: the stats are of requests that named the address.
    if (matched.kind === 'api') countCall(hooks, matched.call, params);
    // The table gives each kind the handler for its own route; TypeScript cannot follow that through the lookup.
    const handler = handlers[matched.kind] as RouteHandler<Route>;
    return handler(matched, { req, res, params });
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    dressResponse(res);
    let answer: Promise<FaultedReply> | undefined;
    try {
      answer = dispatch(req, res);
    } catch (error) {
      writer.write(res, errorReply(error));
      return;
    }
    answer?.then(
      ({ reply, fault }) => writer.write(res, reply, fault),
      (error: unknown) => writer.write(res, errorReply(error)),
    );
  }

  return {
    handle,
    close() {
      writer.close();
      closing.abort();
      events.closeAll();
      ctx.mcp.close();
    },
  };
}
