// The mailbox HTTP API (see CONTRACT.md), on node:http directly.
//
// Every answer is computed as a Reply first and written in one place, which is
// where an injected fault decides how (or whether) the answer reaches the wire.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseMailboxAddress } from './addresses.js';
import type { Budget, BudgetDecision } from './budget.js';
import { normalizeInjection, type ApiCall, type Fault, type FaultSwitch, type RequestCounter } from './faults.js';
import { isWellFormedId } from './ids.js';
import type { Logger } from './log.js';
import type { MailSummary } from './parse.js';
import type { MessageStore, StoredMessage } from './store.js';

export const API_BASE = '/api/v1';
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 100;
const MAX_ADMIN_BODY = 64 * 1024;

export interface ApiContext {
  readonly store: MessageStore;
  readonly domains: readonly string[];
  readonly listBudget: Budget;
  readonly messageBudget: Budget;
  readonly faults: FaultSwitch;
  readonly counter: RequestCounter;
  readonly token: string | undefined;
  readonly faultInjection: boolean;
  readonly logger: Logger;
}

interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer;
}

/** A refusal with its stable slug; thrown inside handlers, turned into a Reply. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...headers }, body: JSON.stringify(body) };
}

function refusalReply(refusal: Refusal): Reply {
  return json(refusal.status, { error: refusal.slug, message: refusal.message }, { ...refusal.headers });
}

type Route =
  | { readonly kind: 'api'; readonly call: ApiCall; readonly id?: string }
  | { readonly kind: 'healthz' }
  | { readonly kind: 'faults'; readonly method: 'POST' | 'DELETE' }
  | { readonly kind: 'stats' };

function methodNotAllowed(method: string, path: string, allowed: readonly string[]): Refusal {
  return new Refusal(405, 'method_not_allowed', `${method} is not allowed on ${path}; use ${allowed.join(' or ')}`, { allow: allowed.join(', ') });
}

/** Maps method + path to a route, or throws the refusal for it. */
function route(method: string, path: string, faultInjection: boolean): Route {
  const verb = method === 'HEAD' ? 'GET' : method;
  if (path === '/healthz') {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'healthz' };
  }
  if (path === `${API_BASE}/mailbox`) {
    if (verb === 'GET') return { kind: 'api', call: 'list' };
    if (verb === 'DELETE') return { kind: 'api', call: 'deleteMailbox' };
    throw methodNotAllowed(method, path, ['GET', 'DELETE']);
  }
  if (path === `${API_BASE}/message` || path.startsWith(`${API_BASE}/message/`)) {
    const rest = path.slice(`${API_BASE}/message/`.length).split('/');
    let id: string | undefined;
    try {
      id = rest[0] === undefined ? undefined : decodeURIComponent(rest[0]);
    } catch {
      id = undefined;
    }
    const raw = rest.length === 2 && rest[1] === 'raw';
    if (id === undefined || !isWellFormedId(id) || (rest.length !== 1 && !raw)) {
      const shown = path.slice(`${API_BASE}/message/`.length);
      throw new Refusal(400, 'invalid_request', `Malformed message id ${JSON.stringify(shown)}: an id is 11 characters of 0-9 and a-z, as returned by GET ${API_BASE}/mailbox`);
    }
    if (raw) {
      if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
      return { kind: 'api', call: 'raw', id };
    }
    if (verb === 'GET') return { kind: 'api', call: 'message', id };
    if (verb === 'DELETE') return { kind: 'api', call: 'deleteMessage', id };
    throw methodNotAllowed(method, path, ['GET', 'DELETE']);
  }
  if (faultInjection && path === '/_mailroom/faults') {
    if (verb === 'POST' || verb === 'DELETE') return { kind: 'faults', method: verb };
    throw methodNotAllowed(method, path, ['POST', 'DELETE']);
  }
  if (faultInjection && path === '/_mailroom/stats') {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'stats' };
  }
  throw new Refusal(404, 'not_found', `No such route: ${method} ${path}. The API is GET|DELETE ${API_BASE}/mailbox?address=A, GET|DELETE ${API_BASE}/message/{id}?mailbox=A, GET ${API_BASE}/message/{id}/raw?mailbox=A and GET /healthz`);
}

function singleParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new Refusal(400, 'invalid_request', `Parameter \`${name}\` was given ${values.length} times; give it once`);
  return values[0];
}

function parseLimit(params: URLSearchParams): number {
  const value = singleParam(params, 'limit');
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new Refusal(400, 'invalid_request', `Parameter \`limit\` must be a whole number from 1 to ${MAX_LIMIT}, got ${JSON.stringify(value)}`);
  }
  return limit;
}

function refuseRate(address: string, what: string, budget: Budget, decision: Exclude<BudgetDecision, { allowed: true }>): Refusal {
  const window = budget.windowMs === 1000 ? 'second' : `${budget.windowMs / 1000} s`;
  const allowance = `${budget.capacity} call${budget.capacity === 1 ? '' : 's'} per ${window} per address`;
  return new Refusal(429, 'rate_limited',
    `The ${what} budget of ${address} is spent (${allowance}; the last allowed call was ${(decision.sinceLastMs / 1000).toFixed(3)} s ago). Retry after ${decision.retryAfterSeconds} s; this refusal did not count against the budget`,
    { 'retry-after': String(decision.retryAfterSeconds) });
}

function addressParamOf(call: ApiCall): 'address' | 'mailbox' {
  return call === 'list' || call === 'deleteMailbox' ? 'address' : 'mailbox';
}

function summaryOf(message: StoredMessage, parsed: MailSummary) {
  return {
    id: message.id,
    from: parsed.from,
    to: parsed.to,
    subject: parsed.subject,
    preview: parsed.preview,
    received_at: new Date(message.receivedAt).toISOString(),
    size: message.size,
  };
}

function isAuthorized(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ADMIN_BODY) {
        reject(new Refusal(413, 'invalid_request', `Request body over ${MAX_ADMIN_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export interface ApiHandler {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Cancels answers still held back by a `slow` fault. */
  close(): void;
}

export function createApiHandler(ctx: ApiContext): ApiHandler {
  const served = new Set(ctx.domains);
  const delayed = new Set<NodeJS.Timeout>();

  /** The `address` / `mailbox` parameter, validated, as a mailbox key. */
  function mailboxParam(params: URLSearchParams, name: 'address' | 'mailbox'): string {
    const value = singleParam(params, name);
    if (value === undefined) throw new Refusal(400, 'invalid_request', `Missing parameter \`${name}\` (the full address, e.g. ${name}=signup-42@${ctx.domains[0]})`);
    const parsed = parseMailboxAddress(value);
    if (!parsed) throw new Refusal(400, 'invalid_address', `${JSON.stringify(value)} is not a well-formed email address, so it can never receive mail`);
    if (!served.has(parsed.domain)) {
      throw new Refusal(404, 'unknown_domain', `This server does not serve the domain of ${value}; it serves ${ctx.domains.join(', ')}`);
    }
    return parsed.key;
  }

  async function api(call: ApiCall, id: string | undefined, params: URLSearchParams): Promise<{ reply: Reply; fault?: Fault }> {
    const named = params.getAll(addressParamOf(call));
    const namedKey = named.length === 1 ? named[0]!.toLowerCase() : undefined;
    if (namedKey !== undefined) {
      const fault = ctx.faults.take(namedKey, call);
      if (fault) {
        ctx.counter.faulted(namedKey);
        if (fault.kind === 'rate_limit') {
          ctx.counter.rateLimited(namedKey);
          return { reply: refusalReply(new Refusal(429, 'rate_limited', `Injected fault: rate limited for ${named[0]}; retry after ${fault.retryAfter} s`, { 'retry-after': String(fault.retryAfter) })) };
        }
        if (fault.kind === 'status') {
          const slug = fault.status === 500 ? 'internal_error' : 'unavailable';
          return { reply: refusalReply(new Refusal(fault.status, slug, `Injected fault: ${fault.status} for ${named[0]}`)) };
        }
        return { reply: await answer(call, id, params, namedKey), fault };
      }
    }
    return { reply: await answer(call, id, params, namedKey) };
  }

  async function answer(call: ApiCall, id: string | undefined, params: URLSearchParams, namedKey: string | undefined): Promise<Reply> {
    try {
      if (call === 'list') {
        const limit = parseLimit(params);
        const mailbox = mailboxParam(params, 'address');
        spend(ctx.listBudget, mailbox, 'list');
        const messages = ctx.store.list(mailbox, limit);
        const summaries = await Promise.all(messages.map((m) => m.content.summaryIfKnown ?? m.content.summary()));
        // The address is echoed as the caller wrote it (the contract's A); the mailbox itself is case-insensitive.
        return json(200, { address: params.get('address'), messages: messages.map((m, i) => summaryOf(m, summaries[i]!)) });
      }
      if (call === 'deleteMailbox') {
        const mailbox = mailboxParam(params, 'address');
        spend(ctx.messageBudget, mailbox, 'message');
        return json(200, { deleted: ctx.store.deleteMailbox(mailbox) });
      }
      const mailbox = mailboxParam(params, 'mailbox');
      spend(ctx.messageBudget, mailbox, 'message');
      if (call === 'deleteMessage') return json(200, { deleted: ctx.store.delete(mailbox, id!) });
      const message = ctx.store.get(mailbox, id!);
      if (!message) {
        throw new Refusal(404, 'not_found', `No message ${id} in ${mailbox}: it expired, was deleted, or never existed there`);
      }
      if (call === 'raw') {
        return { status: 200, headers: { 'content-type': 'message/rfc822', 'cache-control': 'no-store' }, body: message.content.raw };
      }
      // The summary fields come from the same place as the list's, so they always agree.
      const [summary, parsed] = await Promise.all([message.content.summary(), message.content.parsed()]);
      return json(200, {
        ...summaryOf(message, summary),
        message_id: parsed.messageId,
        cc: parsed.cc,
        date: parsed.date,
        headers: parsed.headers,
        text: parsed.text,
        html: parsed.html,
        attachments: parsed.attachments,
      });
    } catch (error) {
      if (error instanceof Refusal) {
        if (error.status === 429 && namedKey !== undefined) ctx.counter.rateLimited(namedKey);
        return refusalReply(error);
      }
      throw error;
    }
  }

  function spend(budget: Budget, mailbox: string, what: string): void {
    const decision = budget.take(mailbox);
    if (!decision.allowed) throw refuseRate(mailbox, what, budget, decision);
  }

  async function admin(route: Route, req: IncomingMessage, params: URLSearchParams): Promise<Reply> {
    if (route.kind === 'stats') {
      const address = singleParam(params, 'address');
      if (address === undefined) throw new Refusal(400, 'invalid_request', 'Missing parameter `address`');
      return json(200, { address: address.toLowerCase(), ...ctx.counter.get(address) });
    }
    if (route.kind === 'faults' && route.method === 'DELETE') return json(200, { cleared: ctx.faults.clear() });
    const text = await readBody(req);
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
    const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
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
    res.writeHead(reply.status, { ...reply.headers, 'content-length': String(body.length) });
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
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const params = new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    let matched: Route;
    try {
      matched = route(method, path, ctx.faultInjection);
      if (matched.kind === 'api') {
        // Counted before anything can refuse it: the stats are of requests that named the address.
        const named = params.getAll(addressParamOf(matched.call));
        if (named.length === 1) ctx.counter.count(named[0]!.toLowerCase(), matched.call);
      }
      if (matched.kind !== 'healthz' && ctx.token !== undefined && !isAuthorized(req.headers.authorization, ctx.token)) {
        throw new Refusal(401, 'unauthorized', 'This server requires `Authorization: Bearer <token>` (the token it was started with)', { 'www-authenticate': 'Bearer' });
      }
    } catch (error) {
      write(res, error instanceof Refusal ? refusalReply(error) : internalError(error));
      return;
    }
    let work: Promise<{ reply: Reply; fault?: Fault }>;
    if (matched.kind === 'healthz') work = Promise.resolve({ reply: json(200, { ok: true }) });
    else if (matched.kind === 'api') work = api(matched.call, matched.id, params);
    else work = admin(matched, req, params).then((reply) => ({ reply }));
    work.then(
      ({ reply, fault }) => write(res, reply, fault),
      (error: unknown) => write(res, error instanceof Refusal ? refusalReply(error) : internalError(error)),
    );
  }

  function internalError(error: unknown): Reply {
    ctx.logger.error(`mailroom: HTTP handler failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    return json(500, { error: 'internal_error', message: 'The server failed to answer; this is a bug in mailroom, the log has the details' });
  }

  return {
    handle,
    close() {
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
    },
  };
}
