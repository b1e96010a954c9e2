// The mailbox HTTP API (docs/CONTRACT.md), on node:http directly.
//
// Every answer is computed as a Reply first and written in one place, which is
// where an injected fault decides how (or whether) the answer reaches the wire.
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
import type { WireHealth } from '../../contract/wire.js';
import type { RequestBudget } from '../budgets/budget.js';
import type { PageWalks } from '../budgets/page-walks.js';
import type { Logger } from '../log.js';
import type { MailboxReader } from '../mailbox-reader.js';
import type { McpEndpoint } from '../mcp/endpoint.js';
import type { MailStore } from '../store/mail-store.js';
import { bearerTokenCheck } from './bearer-token.js';
import { readBodyUpTo } from './body.js';
import { normalizeInjection, spoilReply, type ApiCall, type Fault, type FaultSwitch, type RequestCounter } from './faults.js';
import { longPoll } from './long-poll.js';
import { messageChecks } from './message-checks.js';
import { parseLimit, parseSinceId, singleParam } from './params.js';
import { addressParamOf, route, type Route } from './routes.js';
import { setSecurityHeaders } from './security-headers.js';
import { answerSmtpLab } from './smtp-lab.js';
import type { LabCalls } from '../rules/lab-calls.js';
import type { LabStore } from '../rules/lab-store.js';
import { answerWebhooks } from './webhooks.js';
import type { WebhookService } from '../webhooks/webhook-service.js';
import { createEventStreams } from './event-stream.js';
import { answerMailboxIndex } from './mailbox-index.js';
import { UI_CSP, uiAsset } from './ui-assets.js';

const MAX_ADMIN_BODY = 64 * 1024;

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
  readonly faults: FaultSwitch;
  readonly counter: RequestCounter;
  readonly token: string | undefined;
  readonly faultInjection: boolean;
  /** The SMTP deferral lab's rules and attempt log, and its calls; when undefined neither is served nor advertised. */
  readonly smtpLab: { readonly lab: LabStore; readonly calls: LabCalls } | undefined;
  /** The webhooks; when undefined they are neither served nor advertised. */
  readonly webhooks: WebhookService | undefined;
  readonly logger: Logger;
}

interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...headers }, body: JSON.stringify(body) };
}

function refusalReply(refusal: Refusal): Reply {
  return json(refusal.status, { error: refusal.slug, message: refusal.message }, { ...refusal.headers });
}

export interface ApiHandler {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void;
  /** Cancels answers still held back by a `slow` fault. */
  readonly close: () => void;
}

export function createApiHandler(ctx: ApiContext): ApiHandler {
  // Discovery: a client that finds `features.wait`
  // here may use the long-poll; a service without it simply does not say so.
  const health: WireHealth = {
    ok: true,
    domains: ctx.domains,
    features: {
      ...(ctx.waitSlots ? { wait: WAIT_PATH } : {}),
      mcp: MCP_PATH,
      paging: PAGING_PARAM,
      ...(ctx.smtpLab ? { smtp_rules: RULES_PATH, smtp_attempts: ATTEMPTS_PATH } : {}),
      ...(ctx.webhooks ? { webhooks: WEBHOOKS_PATH, metrics: METRICS_PATH } : {}),
      ui: UI_PATH,
      mailboxes: MAILBOXES_PATH,
      events: EVENTS_PATH,
    },
  };
  const events = createEventStreams(ctx.store, ctx.reader);
  const smtpLab = ctx.smtpLab?.calls;
  const isAuthorized = ctx.token === undefined ? undefined : bearerTokenCheck(ctx.token);
  const delayed = new Set<NodeJS.Timeout>();
  /** Aborted by close(): held long-polls end and free their slots. */
  const closing = new AbortController();

  /** The `address` / `mailbox` parameter, validated, as a mailbox key. */
  function mailboxParam(params: URLSearchParams, name: 'address' | 'mailbox'): string {
    return ctx.reader.mailboxKey(singleParam(params, name), name);
  }

  async function api(call: ApiCall, id: string | undefined, params: URLSearchParams, signal: AbortSignal): Promise<{ reply: Reply; fault?: Fault }> {
    const named = params.getAll(addressParamOf(call));
    const namedKey = named.length === 1 ? named[0]!.toLowerCase() : undefined;
    if (namedKey !== undefined) {
      const fault = ctx.faults.take(namedKey, call);
      if (fault) {
        ctx.counter.faulted(namedKey);
        if (fault.kind === 'rate_limit') {
          ctx.counter.rateLimited(namedKey);
          return {
            reply: refusalReply(
              new Refusal(429, 'rate_limited', `Injected fault: rate limited for ${named[0]}; retry after ${fault.retryAfter} s`, {
                'retry-after': String(fault.retryAfter),
              }),
            ),
          };
        }
        if (fault.kind === 'status') {
          const slug = fault.status === 500 ? 'internal_error' : 'unavailable';
          return { reply: refusalReply(new Refusal(fault.status, slug, `Injected fault: ${fault.status} for ${named[0]}`)) };
        }
        return { reply: await answer(call, id, params, namedKey, signal), fault };
      }
    }
    return { reply: await answer(call, id, params, namedKey, signal) };
  }

  async function answer(call: ApiCall, id: string | undefined, params: URLSearchParams, namedKey: string | undefined, signal: AbortSignal): Promise<Reply> {
    try {
      if (call === 'list') {
        const limit = parseLimit(params);
        const beforeId = parseSinceId(singleParam(params, PAGING_PARAM), PAGING_PARAM);
        const mailbox = mailboxParam(params, 'address');
        // A page continuing the latest listing is free (page-walks.ts).
        if (beforeId === undefined || !ctx.pageWalks.isFree(mailbox, beforeId)) await ctx.listBudget.spend(mailbox, 'list');
        const messages = await ctx.reader.listing(mailbox, limit, beforeId);
        ctx.pageWalks.served(mailbox, messages);
        // The address is echoed as the caller wrote it (the contract's A); the mailbox itself is case-insensitive.
        return json(200, { address: params.get('address'), messages, ...(await ctx.reader.evictedField(mailbox)) });
      }
      if (call === 'wait') {
        return json(200, await longPoll({ ...ctx, slots: ctx.waitSlots! }, params, signal));
      }
      if (call === 'deleteMailbox') {
        const mailbox = mailboxParam(params, 'address');
        await ctx.messageBudget.spend(mailbox, 'message');
        // The lab's rules and attempt log belong to the mailbox and go with it, and so do the webhooks scoped to it.
        if (ctx.smtpLab) await ctx.smtpLab.lab.forget(mailbox);
        await ctx.webhooks?.removeScopedTo(mailbox);
        return json(200, { deleted: await ctx.store.deleteMailbox(mailbox) });
      }
      const mailbox = mailboxParam(params, 'mailbox');
      await ctx.messageBudget.spend(mailbox, 'message');
      if (call === 'deleteMessage') return json(200, { deleted: await ctx.store.delete(mailbox, id!) });
      const message = await ctx.store.get(mailbox, id!);
      if (!message) {
        throw new Refusal(404, 'not_found', `No message ${id} in ${mailbox}: it expired, was deleted, or never existed there`);
      }
      if (call === 'raw') {
        return { status: 200, headers: { 'content-type': 'message/rfc822', 'cache-control': 'no-store' }, body: await message.content.source() };
      }
      if (call === 'checks') return json(200, await messageChecks(await ctx.reader.wireMessage(message), params, signal));
      return json(200, await ctx.reader.wireMessage(message));
    } catch (error) {
      if (error instanceof Refusal) {
        if (error.status === 429 && namedKey !== undefined) ctx.counter.rateLimited(namedKey);
        return refusalReply(error);
      }
      throw error;
    }
  }

  async function admin(route: Route, req: IncomingMessage, params: URLSearchParams): Promise<Reply> {
    if (route.kind === 'stats') {
      const address = singleParam(params, 'address');
      if (address === undefined) throw new Refusal(400, 'invalid_request', 'Missing parameter `address`');
      return json(200, { address: address.toLowerCase(), ...ctx.counter.get(address) });
    }
    if (route.kind === 'faults' && route.method === 'DELETE') return json(200, { cleared: ctx.faults.clear() });
    const raw = await readBodyUpTo(req, MAX_ADMIN_BODY);
    if (raw === undefined) throw new Refusal(413, 'invalid_request', `Request body over ${MAX_ADMIN_BODY} bytes`);
    const text = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Refusal(400, 'invalid_request', 'The body must be JSON: {"address", "route"?, "times"?, "fault": {"kind", ...}}');
    }
    let injection;
    try {
      injection = normalizeInjection(body);
    } catch (error) {
      throw new Refusal(400, 'invalid_request', (error as Error).message);
    }
    ctx.faults.inject(injection);
    return json(200, { injected: injection });
  }

  function write(res: ServerResponse, reply: Reply, fault?: Fault): void {
    if (res.destroyed) return;
    if (fault?.kind === 'slow') {
      const timer = setTimeout(() => {
        delayed.delete(timer);
        write(res, reply);
      }, fault.delayMs);
      delayed.add(timer);
      res.once('close', () => {
        clearTimeout(timer);
        delayed.delete(timer);
      });
      return;
    }
    const { status, headers, body } = spoilReply({ ...reply, body: typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body }, fault);
    res.writeHead(status, { ...headers, 'content-length': String(body.length) });
    if (fault?.kind === 'reset') {
      // Status line, headers and part of the body reach the client, then the
      // connection dies: the work is done but the answer is lost.
      const part = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
      res.write(part, () => res.socket?.destroy());
      return;
    }
    res.end(body);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    setSecurityHeaders(res);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    let matched: Route;
    try {
      matched = route(method, path, ctx.faultInjection, ctx.waitSlots !== undefined, smtpLab !== undefined, ctx.webhooks !== undefined);
      if (matched.kind === 'api') {
        // Counted before anything can refuse it: the stats are of requests that named the address.
        const named = params.getAll(addressParamOf(matched.call));
        if (named.length === 1) ctx.counter.count(named[0]!.toLowerCase(), matched.call);
      }
      // The UI's static files hold no mail: a browser loads them before it can send a token.
      if (matched.kind !== 'healthz' && matched.kind !== 'ui' && isAuthorized && !isAuthorized(req.headers.authorization)) {
        throw new Refusal(401, 'unauthorized', 'This server requires `Authorization: Bearer <token>` (the token it was started with)', {
          'www-authenticate': 'Bearer',
        });
      }
    } catch (error) {
      write(res, error instanceof Refusal ? refusalReply(error) : internalError(error));
      return;
    }
    if (matched.kind === 'mcp') return ctx.mcp.handle(req, res);
    if (matched.kind === 'events') {
      try {
        events.open(params, res);
      } catch (error) {
        write(res, error instanceof Refusal ? refusalReply(error) : internalError(error));
      }
      return;
    }
    let work: Promise<{ reply: Reply; fault?: Fault }>;
    if (matched.kind === 'healthz') work = Promise.resolve({ reply: json(200, health) });
    else if (matched.kind === 'ui') {
      work = uiAsset(matched.path).then(({ type, body }) => ({
        // The page's own policy replaces the API's sandbox (ui-assets.ts says why that is safe).
        reply: { status: 200, headers: { 'content-type': type, 'cache-control': 'no-cache', 'content-security-policy': UI_CSP }, body },
      }));
    } else if (matched.kind === 'mailboxes') work = answerMailboxIndex(params, ctx.store, ctx.reader).then((body) => ({ reply: json(200, body) }));
    else if (matched.kind === 'api') work = api(matched.call, matched.id, params, requestSignal(matched.call, res));
    else if (matched.kind === 'smtpLab') work = answerSmtpLab(matched.call, params, req, smtpLab!).then((body) => ({ reply: json(200, body) }));
    else if (matched.kind === 'webhooks') {
      const webhooks = { webhooks: ctx.webhooks!, reader: ctx.reader };
      work = answerWebhooks(matched.call, matched, params, req, webhooks).then(({ status, body }) => ({ reply: json(status, body) }));
    } else if (matched.kind === 'metrics') {
      const metrics = ctx.webhooks!.metrics;
      work = metrics.text().then((body) => ({ reply: { status: 200, headers: { 'content-type': metrics.contentType, 'cache-control': 'no-store' }, body } }));
    } else work = admin(matched, req, params).then((reply) => ({ reply }));
    work.then(
      ({ reply, fault }) => write(res, reply, fault),
      (error: unknown) => write(res, error instanceof Refusal ? refusalReply(error) : internalError(error)),
    );
  }

  /** For a held call (a long-poll, the checks fetching links): aborted when the caller hangs up or the server closes. */
  function requestSignal(call: ApiCall, res: ServerResponse): AbortSignal {
    if (call !== 'wait' && call !== 'checks') return closing.signal;
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    return AbortSignal.any([gone.signal, closing.signal]);
  }

  function internalError(error: unknown): Reply {
    ctx.logger.error(`mailroom: HTTP handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return json(500, { error: 'internal_error', message: 'The server failed to answer; this is a bug in mailroom, the log has the details' });
  }

  return {
    handle,
    close() {
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
      closing.abort();
      events.closeAll();
      ctx.mcp.close();
    },
  };
}
