// One list call outside a wait (the watermark read, `Inbox.messages()`):
// through the address's pacer like every check of every wait, so it never
// earns a 429 from the caller's own calls, and retried within a hard stop.
import type { MailroomClient } from '../client/client.js';
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
}

/** The pacer key of an address at one service: two inboxes on one address share its budget. */
export function pacerKey(client: MailroomClient, address: string): string {
  return `${client.apiURL}\u0000${address.toLowerCase()}`;
}

/** The newest `limit` messages of `address`, newest first. */
export async function listPaced(client: MailroomClient, address: string, options: PacedListOptions): Promise<readonly MailSummary[]> {
  const { clock, requestTimeout, hardStop, signal, limit } = options;
  return callWithRetry(
    async (timeout) => {
      const answer = await pacerFor(clock, pacerKey(client, address)).run(
        // The pacer may hold the call for up to a second; the timeout
        // starts when the request does.
        async () => (await client.listMessages(address, { limit, timeout: Math.min(timeout, Math.max(1, hardStop - clock.now())), signal })).messages,
        { signal },
      );
      if (answer === TOO_LATE) throw signal?.reason ?? new Error('aborted');
      return answer;
    },
    { clock, hardStop, requestTimeout, signal },
  );
}
