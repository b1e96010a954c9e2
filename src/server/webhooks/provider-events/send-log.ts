// What the provider event source remembers between a send and what a test
// later says of it: the last provider send to each address (a report is
// about it), and the provider's suppression list (an address reported
// hard-bounced or complained for a provider: its next send through that
// provider is `dropped`). Kept where the webhooks are: this server's memory
// beside the memory store (`MemorySendLog`), Redis beside the Redis store
// (redis-webhook-store.ts, the same three calls in webhook.lua), so a test
// may report through any server on the store, whichever took the send.
//
// Both are bounded alike: the last 10,000 addresses' sends and 10,000
// suppressions, the oldest forgotten first.
import type { ProviderFormat } from '../../../contract/provider-events.js';
import type { Awaitable } from '../../base/awaitable.js';
import type { ProviderSendFacts } from '../../base/smtp-attempts.js';

/** The last provider send to an address, as a report names it. Plain data: a shared store keeps it as JSON. */
export interface LastSend {
  readonly provider: ProviderFormat;
  readonly from: string;
  readonly send: ProviderSendFacts;
  readonly at: number;
}

export interface ProviderSendLog {
  /** Remembers the provider's send to `address`; answers why that provider suppresses the address (a `dropped` event's detail), or undefined. */
  sent(address: string, last: LastSend): Awaitable<string | undefined>;
  /** The last provider send to `address` remembered, or undefined. */
  last(address: string): Awaitable<LastSend | undefined>;
  /** Puts `address` on `provider`'s suppression list, for `reason` (SendGrid's words: `Bounced Address`, `Spam Reporting Address`). */
  suppress(provider: ProviderFormat, address: string, reason: string): Awaitable<void>;
}

/** How many addresses' last sends, and how many suppressions, are kept; the oldest go first. */
export const SEND_LOG_MAX = 10_000;

/** `map.set`, the entry made the newest, the oldest gone past `SEND_LOG_MAX`. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > SEND_LOG_MAX) map.delete(map.keys().next().value!);
}

/** A suppression's key: the provider and the address. */
export const suppressionKey = (provider: ProviderFormat, address: string): string => `${provider} ${address}`;

/** The send log in this server's memory (beside the memory store). */
export class MemorySendLog implements ProviderSendLog {
  readonly #last = new Map<string, LastSend>();
  readonly #suppressed = new Map<string, string>();

  sent(address: string, last: LastSend): string | undefined {
    remember(this.#last, address, last);
    return this.#suppressed.get(suppressionKey(last.provider, address));
  }

  last(address: string): LastSend | undefined {
    return this.#last.get(address);
  }

  suppress(provider: ProviderFormat, address: string, reason: string): void {
    remember(this.#suppressed, suppressionKey(provider, address), reason);
  }
}
