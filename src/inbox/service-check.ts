// Setup's check that the mail service is there, for an address the inbox
// minted itself.
//
// A minted address holds no mail by construction (80 random bits), so its
// watermark is "nothing yet" without asking: no list call, so the address's
// one list call a second is still unspent when the first wait looks. What
// setup still owes the test is the early, clear failure: "is the mail server
// running there?", and "it does not serve that domain". One `GET /healthz`
// per process and API URL answers both and spends no address's budget.
import type { MailBackend } from '../backends/backend.js';
import { MailroomError, asError, isTransient } from '../client/errors.js';
import type { ServiceFeatures } from '../client/messages.js';
import { parseMailboxAddress } from '../contract/address.js';
import { callWithRetry, type RetryOptions } from '../wait/retry.js';

/** Services that answered, by API URL; a failed check is forgotten, so the next setup asks again. */
const answered = new Map<string, Promise<ServiceFeatures>>();

/**
 * Resolves once the service at the client's API URL has answered `/healthz`
 * in this process and, when it lists the domains it serves, serves the
 * address's. Transient failures are retried within `options.hardStop`.
 */
export async function checkService(client: MailBackend, address: string, options: RetryOptions): Promise<void> {
  let features = answered.get(client.apiURL);
  if (!features) {
    // Not tied to this caller's signal: other setups may share the answer.
    features = callWithRetry((timeout) => client.health({ timeout }), { ...options, signal: undefined }).then(async (ok) => {
      if (!ok) throw new MailroomError(`${client.apiURL}/healthz answered that the service is not ok`, { slug: 'unavailable', address });
      return client.features();
    });
    answered.set(client.apiURL, features);
    features.catch(() => answered.delete(client.apiURL));
  }
  let served: readonly string[] | undefined;
  try {
    served = (await abortable(features, options.signal)).domains;
  } catch (error) {
    throw unreachable(error, `Could not reach the mail service for ${address} at ${client.apiURL}`, address);
  }
  const domain = parseMailboxAddress(address)?.domain;
  if (served && domain !== undefined && !served.includes(domain)) {
    throw new MailroomError(
      `${address} can never receive mail at ${client.apiURL}: the service serves ${served.join(', ')}, not ${domain}. Check MAILROOM_DOMAIN or the \`domain\` option.`,
      { slug: 'unknown_domain', address },
    );
  }
}

/**
 * A transient failure of a setup call, reworded to say what setup was doing
 * and where, and to ask whether the mail server is running there; anything
 * else (a refusal with its slug, an abort) is passed on as it is.
 */
export function unreachable(error: unknown, doing: string, address: string): unknown {
  if (!(error instanceof MailroomError) || !isTransient(error)) return error;
  return new MailroomError(`${doing}: ${error.message}. Is the mail server running there (MAILROOM_API_URL)?`, {
    slug: error.slug,
    status: error.status,
    address,
    cause: error,
  });
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(asError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
