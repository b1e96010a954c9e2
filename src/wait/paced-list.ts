// One list call outside a wait (the watermark read, `Inbox.messages()`):
// through the address's pacer like every check of every wait, so it never
// earns a 429 from the caller's own calls, and retried within a hard stop.
import type { MailBackend } from '../backends/backend.js';
import type { MailSummary } from '../client/messages.js';
import type { Clock } from './clock.js';
import { pacerFor, TOO_LATE } from './pacer.js';
import { callWithRetry } from './retry.js';

export interface PacedListOptions {
  readonly limit: number;
  readonly clock: Clock;
  readonly requestTimeout: number;
  /** No attempt may run past this moment (`clock.now()` scale). */
  readonly hardStop: number;
  readonly signal: AbortSignal | undefined;
  /**
   * Runs in the same turn of the pacer, right after the list call: further
   * pages down the mailbox, which the service does not charge when they
   * follow at once. `until` is when the list call's timeout ends.
   */
  readonly extend?: ((first: readonly MailSummary[], until: number) => Promise<readonly MailSummary[]>) | undefined;
}

/** The pacer key of an address at one service: two inboxes on one address share its budget. */
export function pacerKey(client: MailBackend, address: string): string {
  return `${client.apiURL}\u0000${address.toLowerCase()}`;
}

/** The newest `limit` messages of `address`, newest first. */
export async function listPaced(client: MailBackend, address: string, options: PacedListOptions): Promise<readonly MailSummary[]> {
  const { limit, extend, signal } = options;
  return callPaced(client, address, options, async (timeout, until) => {
    const { messages } = await client.listMessages(address, { limit, timeout, signal });
    return extend ? extend(messages, until) : messages;
  });
}

/**
 * Any call that reads the address's list (a listing, a catcher's ids),
 * through the address's pacer and retried within the hard stop. `call`
 * gets its request timeout and when that timeout ends.
 */
export async function callPaced<T>(
  client: MailBackend,
  address: string,
  options: Omit<PacedListOptions, 'limit' | 'extend'>,
  call: (timeout: number, until: number) => Promise<T>,
): Promise<T> {
  const { clock, requestTimeout, hardStop, signal } = options;
  return callWithRetry(
    async (timeout) => {
      const answer = await pacerFor(clock, pacerKey(client, address)).run(
        // The pacer may hold the call for up to a second; the timeout
        // starts when the request does.
        async () => {
          const ms = Math.min(timeout, Math.max(1, hardStop - clock.now()));
          return call(ms, clock.now() + ms);
        },
        { signal },
      );
      if (answer === TOO_LATE) throw signal?.reason ?? new Error('aborted');
      return answer;
    },
    { clock, hardStop, requestTimeout, signal },
  );
}
