// The fault switch and request accounting: test hooks that let a client's wait
// loop be proven against 429s, 5xx bursts, slow answers, connections reset
// after the answer, and answers that arrive whole but are not what the
// contract says (malformed JSON, a truncated body, the wrong content type),
// through real sockets.
import { parseMailboxAddress } from '../../../contract/address.js';
import { expectedError } from '../../../contract/validation.js';
import type { ApiCall } from '../mailbox/mailbox-calls.js';

export type FaultRoute = 'list' | 'message' | 'wait' | 'any';

export type Fault =
  | { readonly kind: 'rate_limit'; readonly retryAfter: number }
  | { readonly kind: 'status'; readonly status: 500 | 502 | 503 | 504 }
  | { readonly kind: 'slow'; readonly delayMs: number }
  | { readonly kind: 'reset' }
  /** The real status and type, with a body that is not JSON (the real one with a stray comma before its last brace). */
  | { readonly kind: 'malformed_json' }
  /** The real status and type, with the first half of the real body only; `content-length` matches, so the connection stays usable. */
  | { readonly kind: 'truncated' }
  /** 200 with an HTML page as `text/html`: what a captive portal or a misrouted proxy answers. */
  | { readonly kind: 'wrong_type' };

export interface FaultInjection {
  /** The address whose requests get the fault (matched on the `address` / `mailbox` query parameter). */
  readonly address: string;
  /** Which calls: `list` (GET mailbox), `message` (GET message, GET raw, DELETE message), `wait` (GET mailbox/wait) or `any`. Default `any`. */
  readonly route?: FaultRoute;
  /** How many matching requests get it. Default 1. */
  readonly times?: number;
  readonly fault: Fault;
}

export interface RequestStats {
  list: number;
  /** Long-polls (`GET /api/v1/mailbox/wait`). */
  wait: number;
  message: number;
  raw: number;
  deleteMessage: number;
  deleteMailbox: number;
  /** 429 answers, from the real budget or an injected rate_limit fault. */
  rateLimited: number;
  /** Requests that got an injected fault of any kind. */
  faulted: number;
}

interface ArmedFault {
  readonly address: string;
  readonly route: FaultRoute;
  remaining: number;
  readonly fault: Fault;
}

const STATUS_FAULTS = new Set([500, 502, 503, 504]);

function fail(name: string, what: string, value: unknown): never {
  throw expectedError(name, what, value);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Validates an injection (from code or from the HTTP admin route) into a complete, frozen one. */
export function normalizeInjection(input: unknown): Required<FaultInjection> {
  if (input === null || typeof input !== 'object') fail('injection', 'an object { address, route?, times?, fault }', input);
  const { address, route = 'any', times = 1, fault } = input as Record<string, unknown>;
  if (typeof address !== 'string' || !parseMailboxAddress(address)) fail('address', 'a well-formed email address', address);
  if (route !== 'list' && route !== 'message' && route !== 'wait' && route !== 'any') fail('route', '"list", "message", "wait" or "any"', route);
  if (!Number.isInteger(times) || (times as number) < 1) fail('times', 'a positive integer', times);
  if (fault === null || typeof fault !== 'object') fail('fault', 'an object with a `kind`', fault);
  const f = fault as Record<string, unknown>;
  let checked: Fault;
  switch (f.kind) {
    case 'rate_limit':
      if (!isNonNegativeInteger(f.retryAfter)) fail('fault.retryAfter', 'a whole number of seconds', f.retryAfter);
      checked = { kind: 'rate_limit', retryAfter: f.retryAfter };
      break;
    case 'status':
      if (!STATUS_FAULTS.has(f.status as number)) fail('fault.status', '500, 502, 503 or 504', f.status);
      checked = { kind: 'status', status: f.status as 500 | 502 | 503 | 504 };
      break;
    case 'slow':
      if (!isNonNegativeInteger(f.delayMs)) fail('fault.delayMs', 'a whole number of milliseconds', f.delayMs);
      checked = { kind: 'slow', delayMs: f.delayMs };
      break;
    case 'reset':
    case 'malformed_json':
    case 'truncated':
    case 'wrong_type':
      checked = { kind: f.kind };
      break;
    default:
      fail('fault.kind', '"rate_limit", "status", "slow", "reset", "malformed_json", "truncated" or "wrong_type"', f.kind);
  }
  return Object.freeze({ address: address.toLowerCase(), route, times: times as number, fault: Object.freeze(checked) });
}

/** An answer as the HTTP handler writes it. */
export interface FaultyReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

const WRONG_TYPE_PAGE = '<!doctype html><html><head><title>Gateway busy</title></head><body><h1>Gateway busy</h1><p>Please try again.</p></body></html>';

/**
 * The answer a body fault turns `reply` into; the others leave it as it is
 * (they act on how it is written, not on what it says).
 */
export function spoilReply(reply: FaultyReply, fault: Fault | undefined): FaultyReply {
  switch (fault?.kind) {
    case 'malformed_json': {
      const text = reply.body.toString('utf8');
      const spoiled = /\}\s*$/.test(text) ? text.replace(/\}\s*$/, ',}') : `${text},`;
      return { ...reply, body: Buffer.from(spoiled) };
    }
    case 'truncated':
      return { ...reply, body: reply.body.subarray(0, Math.floor(reply.body.length / 2)) };
    case 'wrong_type':
      return { status: 200, headers: { ...reply.headers, 'content-type': 'text/html; charset=utf-8' }, body: Buffer.from(WRONG_TYPE_PAGE) };
    default:
      return reply;
  }
}

function routeOf(call: ApiCall): FaultRoute | undefined {
  if (call === 'list') return 'list';
  if (call === 'wait') return 'wait';
  if (call === 'message' || call === 'raw' || call === 'checks' || call === 'deleteMessage') return 'message';
  return undefined;
}

export class FaultSwitch {
  #armed: ArmedFault[] = [];

  /** Arms a fault for the next `times` matching requests. Injections for one address queue up in order. */
  inject(injection: FaultInjection): void {
    const { address, route, times, fault } = normalizeInjection(injection);
    this.#armed.push({ address, route, remaining: times, fault });
  }

  /** Disarms every fault; returns how many were still armed. */
  clear(): number {
    const count = this.#armed.length;
    this.#armed = [];
    return count;
  }

  /** Takes the first armed fault matching this request, if any. */
  take(addressKey: string, call: ApiCall): Fault | undefined {
    if (this.#armed.length === 0) return undefined;
    const route = routeOf(call);
    const index = this.#armed.findIndex((f) => f.address === addressKey && (f.route === 'any' || f.route === route));
    if (index === -1) return undefined;
    const armed = this.#armed[index]!;
    if (--armed.remaining === 0) this.#armed.splice(index, 1);
    return armed.fault;
  }
}

// Accounting is kept for the most recent addresses only, so a long-running
// server does not grow without bound.
const MAX_TRACKED_ADDRESSES = 10_000;

export class RequestCounter {
  readonly #stats = new Map<string, RequestStats>();

  #entry(addressKey: string): RequestStats {
    let entry = this.#stats.get(addressKey);
    if (!entry) {
      if (this.#stats.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = this.#stats.keys().next().value;
        if (oldest !== undefined) this.#stats.delete(oldest);
      }
      entry = { list: 0, wait: 0, message: 0, raw: 0, deleteMessage: 0, deleteMailbox: 0, rateLimited: 0, faulted: 0 };
      this.#stats.set(addressKey, entry);
    }
    return entry;
  }

  count(addressKey: string, call: ApiCall): void {
    // A checks call reads the message (and spends its budget) as a message read does.
    this.#entry(addressKey)[call === 'checks' ? 'message' : call]++;
  }

  rateLimited(addressKey: string): void {
    this.#entry(addressKey).rateLimited++;
  }

  faulted(addressKey: string): void {
    this.#entry(addressKey).faulted++;
  }

  /** A snapshot (zeros for an address never seen). */
  get(address: string): RequestStats {
    const entry = this.#stats.get(address.toLowerCase());
    return entry ? { ...entry } : { list: 0, wait: 0, message: 0, raw: 0, deleteMessage: 0, deleteMailbox: 0, rateLimited: 0, faulted: 0 };
  }
}
