// Which route a request is for: method and path to a `Route`, or the
// refusal (`404 not_found`, `405 method_not_allowed` with `Allow`,
// `400 invalid_request` for a malformed message id).
import { Refusal } from '../../contract/refusal.js';
import {
  API_BASE,
  ATTEMPTS_PATH,
  EVENTS_PATH,
  HEALTH_PATH,
  MAILBOXES_PATH,
  MCP_PATH,
  METRICS_PATH,
  RULES_PATH,
  WAIT_PATH,
  WEBHOOKS_PATH,
} from '../../contract/routes.js';
import { isWellFormedId } from '../store/ids.js';
import type { ApiCall } from './faults.js';
import type { SmtpLabCall } from './smtp-lab.js';
import { isUiPath } from './ui-assets.js';
import type { WebhookCall } from './webhooks.js';

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
  | { readonly kind: 'faults'; readonly method: 'POST' | 'DELETE' }
  | { readonly kind: 'stats' };

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

/** Maps method + path to a route, or throws the refusal for it. */
export function route(method: string, path: string, faultInjection: boolean, longPollServed: boolean, smtpRulesServed = false, webhooksServed = false): Route {
  const verb = method === 'HEAD' ? 'GET' : method;
  if (webhooksServed && (path === WEBHOOKS_PATH || path.startsWith(`${WEBHOOKS_PATH}/`))) return webhookRoute(method, verb, path);
  if (webhooksServed && path === METRICS_PATH) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'metrics' };
  }
  if (path === HEALTH_PATH) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'healthz' };
  }
  if (isUiPath(path)) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'ui', path };
  }
  if (path === MAILBOXES_PATH) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'mailboxes' };
  }
  if (path === EVENTS_PATH) {
    if (method !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'events' };
  }
  if (path === MCP_PATH) {
    // Stateless: there is no session to stream to (GET) or to end (DELETE).
    if (method !== 'POST') throw methodNotAllowed(method, path, ['POST']);
    return { kind: 'mcp' };
  }
  if (path === WAIT_PATH && longPollServed) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'api', call: 'wait' };
  }
  if (path === RULES_PATH && smtpRulesServed) {
    if (verb === 'GET') return { kind: 'smtpLab', call: 'rules' };
    if (verb === 'POST') return { kind: 'smtpLab', call: 'addRule' };
    if (verb === 'DELETE') return { kind: 'smtpLab', call: 'clearRules' };
    throw methodNotAllowed(method, path, ['GET', 'POST', 'DELETE']);
  }
  if (path === ATTEMPTS_PATH && smtpRulesServed) {
    if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
    return { kind: 'smtpLab', call: 'attempts' };
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
      if (verb !== 'GET') throw methodNotAllowed(method, path, ['GET']);
      return { kind: 'api', call: 'checks', id };
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
  throw new Refusal(
    404,
    'not_found',
    `No such route: ${method} ${path}. The API is GET|DELETE ${API_BASE}/mailbox?address=A, ${longPollServed ? `GET ${WAIT_PATH}?address=A&since_id=ID, ` : ''}${smtpRulesServed ? `GET|POST|DELETE ${RULES_PATH}?address=A, GET ${ATTEMPTS_PATH}?address=A, ` : ''}${webhooksServed ? `GET|POST ${WEBHOOKS_PATH}, GET ${METRICS_PATH}, ` : ''}GET|DELETE ${API_BASE}/message/{id}?mailbox=A, GET ${API_BASE}/message/{id}/raw?mailbox=A, GET ${API_BASE}/message/{id}/checks?mailbox=A, GET ${MAILBOXES_PATH}, GET ${EVENTS_PATH}, POST ${MCP_PATH} and GET ${HEALTH_PATH}; the web UI is at /`,
  );
}

export function addressParamOf(call: ApiCall): 'address' | 'mailbox' {
  return call === 'list' || call === 'deleteMailbox' || call === 'wait' ? 'address' : 'mailbox';
}
