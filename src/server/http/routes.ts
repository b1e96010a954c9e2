// The route table: which route a request is for, method and path to a
// `Route`, or the refusal (`404 not_found`, `405 method_not_allowed` with
// `Allow`, `400 invalid_request` for a malformed id). Each row names its path,
// the option that serves it, and the route for each method; what answers a
// route is api.ts's handler for its kind.
import { Refusal } from '../../contract/refusal.js';
import {
  API_BASE,
  ATTEMPTS_PATH,
  EVENTS_PATH,
  HEALTH_PATH,
  MAILBOXES_PATH,
  MCP_PATH,
  METRICS_PATH,
  PROVIDER_EVENTS_PATH,
  RULES_PATH,
  WAIT_PATH,
  WEBHOOKS_PATH,
} from '../../contract/routes.js';
import { isWellFormedId } from '../store/ids.js';
import type { ApiCall } from './mailbox/mailbox-calls.js';
import type { SmtpLabCall } from './lab/smtp-lab.js';
import { isUiPath } from './web-ui/ui-assets.js';
import type { WebhookCall } from './webhooks/webhooks.js';
import type { ProviderOperation } from './providers/provider-operation.js';
import { providerOperationFor } from './providers/provider-table.js';
import type { SnsCall } from './webhooks/provider-events.js';
import { SNS_CERTIFICATE_PATH, SNS_CONFIRM_PATH } from '../webhooks/provider-events/ses.js';

export type Route =
  | { readonly kind: 'api'; readonly call: ApiCall; readonly id?: string }
  | { readonly kind: 'healthz' }
  | { readonly kind: 'ui'; readonly path: string }
  | { readonly kind: 'mailboxes' }
  | { readonly kind: 'events' }
  | { readonly kind: 'mcp' }
  | { readonly kind: 'smtpLab'; readonly call: SmtpLabCall }
  | { readonly kind: 'webhooks'; readonly call: WebhookCall; readonly id?: string; readonly eventId?: string }
  | { readonly kind: 'metrics' }
  /** A test's report of a provider event for its address. */
  | { readonly kind: 'providerEvent' }
  /** SES's SNS links, fetched by the app under test: no token. */
  | { readonly kind: 'sns'; readonly call: SnsCall }
  | { readonly kind: 'faults'; readonly method: 'POST' | 'DELETE' }
  | { readonly kind: 'stats' }
  /** A provider API's send call (Resend, SES, ...): intake, answered in the provider's own shape. */
  | { readonly kind: 'provider'; readonly operation: ProviderOperation };

function methodNotAllowed(method: string, path: string, allowed: readonly string[]): Refusal {
  return new Refusal(405, 'method_not_allowed', `${method} is not allowed on ${path}; use ${allowed.join(' or ')}`, { allow: allowed.join(', ') });
}

const WEBHOOK_ID = /^wh_[0-9a-f]{24}$/;
const EVENT_ID = /^evt_[0-9a-f]{32}$/;

/** `/api/v1/webhooks...`: the registrations, one of them, its log, its dead letters, a replay. */
function webhookRoute(method: string, verb: string, path: string): Route {
  const allow = (allowed: readonly string[]) => methodNotAllowed(method, path, allowed);
  if (path === WEBHOOKS_PATH) {
    if (verb === 'GET') return { kind: 'webhooks', call: 'list' };
    if (verb === 'POST') return { kind: 'webhooks', call: 'add' };
    throw allow(['GET', 'POST']);
  }
  const [id, part, eventId, replay, ...rest] = path.slice(WEBHOOKS_PATH.length + 1).split('/');
  if (id === undefined || !WEBHOOK_ID.test(id) || rest.length > 0) {
    throw new Refusal(
      400,
      'invalid_request',
      `Malformed webhook path ${JSON.stringify(path)}: a webhook id is wh_ and 24 hex digits, as POST ${WEBHOOKS_PATH} returns it`,
    );
  }
  if (part === undefined) {
    if (verb === 'GET') return { kind: 'webhooks', call: 'get', id };
    if (verb === 'DELETE') return { kind: 'webhooks', call: 'remove', id };
    throw allow(['GET', 'DELETE']);
  }
  if (part === 'deliveries' && eventId === undefined) {
    if (verb !== 'GET') throw allow(['GET']);
    return { kind: 'webhooks', call: 'deliveries', id };
  }
  if (part === 'dead-letters' && eventId === undefined) {
    if (verb !== 'GET') throw allow(['GET']);
    return { kind: 'webhooks', call: 'deadLetters', id };
  }
  if (part === 'dead-letters' && eventId !== undefined && replay === 'replay') {
    if (!EVENT_ID.test(eventId))
      throw new Refusal(400, 'invalid_request', `Malformed event id ${JSON.stringify(eventId)}: an event id is evt_ and 32 hex digits`);
    if (method !== 'POST') throw allow(['POST']);
    return { kind: 'webhooks', call: 'replay', id, eventId };
  }
  throw new Refusal(
    404,
    'not_found',
    `No such route: ${method} ${path}. A webhook has GET|DELETE ${WEBHOOKS_PATH}/{id}, GET .../{id}/deliveries, GET .../{id}/dead-letters and POST .../{id}/dead-letters/{event_id}/replay`,
  );
}

/** `/api/v1/message/{id}`, `.../raw` and `.../checks`: one message, by its well-formed id. */
function messageRoute(method: string, verb: string, path: string): Route {
  const rest = path.slice(`${API_BASE}/message/`.length).split('/');
  let id: string | undefined;
  try {
    id = rest[0] === undefined ? undefined : decodeURIComponent(rest[0]);
  } catch {
    id = undefined;
  }
  const raw = rest.length === 2 && rest[1] === 'raw';
  const checks = rest.length === 2 && rest[1] === 'checks';
  if (id === undefined || !isWellFormedId(id) || (rest.length !== 1 && !raw && !checks)) {
    const shown = path.slice(`${API_BASE}/message/`.length);
    throw new Refusal(
      400,
      'invalid_request',
      `Malformed message id ${JSON.stringify(shown)}: an id is 11 characters of 0-9 and a-z, as returned by GET ${API_BASE}/mailbox`,
    );
  }
  if (raw) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'api', call: 'raw', id };
  }
  if (checks) {
    // GET runs the checks that fetch nothing; POST with {"links": true} the links check too (mailbox/checks-request.ts).
    if (verb !== 'GET' && verb !== 'POST') throw methodNotAllowed(method, path, ['GET', 'POST']);
    return { kind: 'api', call: 'checks', id };
  }
  if (verb === 'GET') return { kind: 'api', call: 'message', id };
  if (verb === 'DELETE') return { kind: 'api', call: 'deleteMessage', id };
  throw methodNotAllowed(method, path, ['GET', 'DELETE']);
}

/** Which optional route groups this server serves (each off unless its option is on). */
export interface ServedRoutes {
  readonly faultInjection: boolean;
  readonly providerApis: boolean;
  readonly longPoll: boolean;
  readonly smtpRules: boolean;
  readonly webhooks: boolean;
}

/** One row of the route table. */
interface RouteEntry {
  /** The option that serves it; a row whose option is off is not there at all (404). */
  readonly servedBy?: keyof ServedRoutes;
  readonly path: string | ((path: string) => boolean);
  /** The route for each method, in the order a 405's `Allow` lists them. */
  readonly methods: Readonly<Record<string, (path: string) => Route>> | ((method: string, verb: string, path: string) => Route);
  /** `HEAD` is answered as `GET` unless the row is strict (the event stream, MCP). */
  readonly strict?: boolean;
}

const is = (route: Route) => () => route;

/** The routes in the order they are matched: the first row whose path matches answers, or refuses the method. */
const ROUTE_TABLE: readonly RouteEntry[] = [
  // `/` is both the web UI's page (GET) and SES v1's query endpoint (POST), which the SDK posts to at the endpoint's root.
  {
    servedBy: 'providerApis',
    path: '/',
    methods: { GET: (path) => ({ kind: 'ui', path }), POST: (path) => ({ kind: 'provider', operation: providerOperationFor(path)! }) },
  },
  // The providers' own paths (`/emails`, `/v2/email/outbound-emails`, ...), so an SDK's base URL is simply the server's.
  {
    servedBy: 'providerApis',
    path: (path) => providerOperationFor(path) !== undefined,
    methods: { POST: (path) => ({ kind: 'provider', operation: providerOperationFor(path)! }) },
  },
  { servedBy: 'webhooks', path: (path) => path === WEBHOOKS_PATH || path.startsWith(`${WEBHOOKS_PATH}/`), methods: webhookRoute },
  { servedBy: 'webhooks', path: METRICS_PATH, methods: { GET: is({ kind: 'metrics' }) } },
  { servedBy: 'webhooks', path: PROVIDER_EVENTS_PATH, methods: { POST: is({ kind: 'providerEvent' }) } },
  { servedBy: 'webhooks', path: SNS_CERTIFICATE_PATH, methods: { GET: is({ kind: 'sns', call: 'certificate' }) } },
  { servedBy: 'webhooks', path: SNS_CONFIRM_PATH, methods: { GET: is({ kind: 'sns', call: 'confirm' }) } },
  { path: HEALTH_PATH, methods: { GET: is({ kind: 'healthz' }) } },
  { path: isUiPath, methods: { GET: (path) => ({ kind: 'ui', path }) } },
  { path: MAILBOXES_PATH, methods: { GET: is({ kind: 'mailboxes' }) } },
  { path: EVENTS_PATH, methods: { GET: is({ kind: 'events' }) }, strict: true },
  // Stateless: there is no session to stream to (GET) or to end (DELETE).
  { path: MCP_PATH, methods: { POST: is({ kind: 'mcp' }) }, strict: true },
  { servedBy: 'longPoll', path: WAIT_PATH, methods: { GET: is({ kind: 'api', call: 'wait' }) } },
  {
    servedBy: 'smtpRules',
    path: RULES_PATH,
    methods: {
      GET: is({ kind: 'smtpLab', call: 'rules' }),
      POST: is({ kind: 'smtpLab', call: 'addRule' }),
      DELETE: is({ kind: 'smtpLab', call: 'clearRules' }),
    },
  },
  { servedBy: 'smtpRules', path: ATTEMPTS_PATH, methods: { GET: is({ kind: 'smtpLab', call: 'attempts' }) } },
  { path: `${API_BASE}/mailbox`, methods: { GET: is({ kind: 'api', call: 'list' }), DELETE: is({ kind: 'api', call: 'deleteMailbox' }) } },
  { path: (path) => path === `${API_BASE}/message` || path.startsWith(`${API_BASE}/message/`), methods: messageRoute },
  {
    servedBy: 'faultInjection',
    path: '/_mailroom/faults',
    methods: { POST: is({ kind: 'faults', method: 'POST' }), DELETE: is({ kind: 'faults', method: 'DELETE' }) },
  },
  { servedBy: 'faultInjection', path: '/_mailroom/stats', methods: { GET: is({ kind: 'stats' }) } },
];

function notFound(method: string, path: string, served: ServedRoutes): Refusal {
  const { longPoll, smtpRules, webhooks } = served;
  return new Refusal(
    404,
    'not_found',
    `No such route: ${method} ${path}. The API is GET|DELETE ${API_BASE}/mailbox?address=A, ${longPoll ? `GET ${WAIT_PATH}?address=A&since_id=ID, ` : ''}${smtpRules ? `GET|POST|DELETE ${RULES_PATH}?address=A, GET ${ATTEMPTS_PATH}?address=A, ` : ''}${webhooks ? `GET|POST ${WEBHOOKS_PATH}, GET ${METRICS_PATH}, ` : ''}GET|DELETE ${API_BASE}/message/{id}?mailbox=A, GET ${API_BASE}/message/{id}/raw?mailbox=A, GET|POST ${API_BASE}/message/{id}/checks?mailbox=A, GET ${MAILBOXES_PATH}, GET ${EVENTS_PATH}, POST ${MCP_PATH} and GET ${HEALTH_PATH}; the web UI is at /`,
  );
}

/** Maps method + path to a route through the route table, or throws the refusal for it. */
export function route(method: string, path: string, served: ServedRoutes): Route {
  const verb = method === 'HEAD' ? 'GET' : method;
  const entry = ROUTE_TABLE.find(
    (row) => (row.servedBy === undefined || served[row.servedBy]) && (typeof row.path === 'string' ? row.path === path : row.path(path)),
  );
  if (!entry) throw notFound(method, path, served);
  if (typeof entry.methods === 'function') return entry.methods(method, verb, path);
  const asked = entry.strict ? method : verb;
  if (!Object.hasOwn(entry.methods, asked)) throw methodNotAllowed(method, path, Object.keys(entry.methods));
  return entry.methods[asked]!(path);
}
