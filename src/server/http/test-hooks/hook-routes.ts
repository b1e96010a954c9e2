// The test hooks over HTTP (served only with `faultInjection`): arm and clear
// faults (`POST|DELETE /_mailroom/faults`), read an address's request stats
// (`GET /_mailroom/stats`), and, around every mailbox call, the fault switch
// itself: counting the call, taking an armed fault, answering for it when the
// fault replaces the answer. How a fault spoils the answer on the wire is
// ../write-reply.ts's.
import type { IncomingMessage } from 'node:http';
import { parseMailboxAddress } from '../../../contract/address.js';
import { Refusal } from '../../../contract/refusal.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import { singleParam } from '../edge/params.js';
import { json, refusalReply, type Reply } from '../edge/reply.js';
import { addressParamOf, type ApiCall } from '../mailbox/mailbox-calls.js';
import { normalizeInjection, type Fault, type FaultSwitch, type RequestCounter } from './faults.js';

export interface TestHooks {
  readonly faults: FaultSwitch;
  readonly counter: RequestCounter;
}

/** A reply and the fault that must spoil it on the wire, if one was taken. */
export interface FaultedReply {
  readonly reply: Reply;
  readonly fault?: Fault;
}

/** The address key a mailbox call names, when it names exactly one. */
function namedKeyOf(call: ApiCall, params: URLSearchParams): { readonly named: string; readonly key: string } | undefined {
  const named = params.getAll(addressParamOf(call));
  // Only a well-formed address is a key: a counter keyed by any string a caller sends would grow without bound.
  return named.length === 1 && parseMailboxAddress(named[0]!) !== undefined ? { named: named[0]!, key: named[0]!.toLowerCase() } : undefined;
}

/** Counts the call for its address once the edge let it through, before the call can refuse it: the stats are of requests that named the address. */
export function countCall(hooks: TestHooks, call: ApiCall, params: URLSearchParams): void {
  const named = namedKeyOf(call, params);
  if (named) hooks.counter.count(named.key, call);
}

/**
 * A mailbox call's answer as the fault switch lets it through: an armed
 * `rate_limit` or `status` fault answers instead of the call; any other is
 * handed on with the real answer (a refusal's reply included), to spoil how
 * it is written. Refusals become replies here, a 429 counted against the
 * address.
 */
export async function answerWithFaults(hooks: TestHooks, call: ApiCall, params: URLSearchParams, answer: () => Promise<Reply>): Promise<FaultedReply> {
  const named = namedKeyOf(call, params);
  const fault = named && hooks.faults.take(named.key, call);
  if (named && fault) {
    hooks.counter.faulted(named.key);
    if (fault.kind === 'rate_limit') {
      hooks.counter.rateLimited(named.key);
      const refusal = new Refusal(429, 'rate_limited', `Injected fault: rate limited for ${named.named}; retry after ${fault.retryAfter} s`, {
        'retry-after': String(fault.retryAfter),
      });
      return { reply: refusalReply(refusal) };
    }
    if (fault.kind === 'status') {
      const slug = fault.status === 500 ? 'internal_error' : 'unavailable';
      return { reply: refusalReply(new Refusal(fault.status, slug, `Injected fault: ${fault.status} for ${named.named}`)) };
    }
  }
  let reply: Reply;
  try {
    reply = await answer();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    if (error.status === 429 && named) hooks.counter.rateLimited(named.key);
    reply = refusalReply(error);
  }
  return fault ? { reply, fault } : { reply };
}

/** `GET /_mailroom/stats?address=A`: every request that named the address, refused or not. */
export function answerStats(hooks: TestHooks, params: URLSearchParams): Reply {
  const address = singleParam(params, 'address');
  if (address === undefined) throw new Refusal(400, 'invalid_request', 'Missing parameter `address`');
  return json(200, { address: address.toLowerCase(), ...hooks.counter.get(address) });
}

/** `POST /_mailroom/faults` arms the injection in the body; `DELETE` disarms every fault. */
export async function answerFaults(hooks: TestHooks, method: 'POST' | 'DELETE', req: IncomingMessage): Promise<Reply> {
  if (method === 'DELETE') return json(200, { cleared: hooks.faults.clear() });
  const raw = await readBodyUpTo(req, BODY_LIMITS.testHooks);
  if (raw === undefined) throw new Refusal(413, 'invalid_request', `Request body over ${BODY_LIMITS.testHooks} bytes`);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Refusal(400, 'invalid_request', 'The body must be JSON: {"address", "route"?, "times"?, "fault": {"kind", ...}}');
  }
  let injection;
  try {
    injection = normalizeInjection(body);
  } catch (error) {
    throw new Refusal(400, 'invalid_request', (error as Error).message);
  }
  hooks.faults.inject(injection);
  return json(200, { injected: injection });
}
