// The store boundary: what SMTP intake, the HTTP API, the long-poll and the
// MCP tools ask of wherever the mail lives. Two real implementations: the
// in-memory store (message-store.ts, the default, one process) and the Redis
// store (../redis/redis-store.ts, shared by any number of server processes).
//
// The methods return `Awaitable` values: the memory store answers
// synchronously (so its speed and its unit tests are what they were), the
// Redis store with promises; every caller awaits. A store that cannot reach
// its backing service throws the `503 unavailable` refusal
// (store-unavailable.ts), which the HTTP API and MCP answer as it is and SMTP
// intake turns into `451 4.3.0`. What one stored message is (its shape, shared
// by every concern that handles mail) is in base/stored-message.ts.
import type { Awaitable } from '../base/awaitable.js';
import type { StoredMessage } from '../base/stored-message.js';

export type RemovalReason = 'expired' | 'evicted' | 'deleted';

/**
 * Told of each message stored for the mailbox, after it is visible to
 * readers. `undefined` means "something may have arrived unseen" (a Redis
 * store's subscription came back after a break): look at the mailbox again.
 */
export type ArrivalListener = (message: StoredMessage | undefined) => void;

/** What changed in the store, for watchers of every mailbox (the web UI's event stream). */
export type StoreChange = { readonly type: 'arrived'; readonly message: StoredMessage } | { readonly type: 'removed'; readonly message: StoredMessage };
export type ChangeListener = (change: StoreChange) => void;

/** One mailbox in the index: its key, how many messages it holds, and its newest. */
export interface MailboxEntry {
  readonly mailbox: string;
  readonly count: number;
  readonly newest: StoredMessage;
}

/**
 * How many mailboxes a `contains` search looks at per call, newest first
 * from its cursor: a substring of the address cannot be looked up, so the
 * search walks the index, and this keeps one call's work bounded whatever
 * the number of mailboxes. What lies beyond is reached with the cursor.
 */
export const INDEX_SEARCH_WINDOW = 5_000;

/** What the index is asked: at most `limit` mailboxes older than `cursor` (a newest id), only keys containing `contains`. */
export interface MailboxQuery {
  readonly limit: number;
  readonly contains?: string | undefined;
  /** The `next` of the page before: continue with the mailboxes whose newest message is older than this id. */
  readonly cursor?: string | undefined;
}

/**
 * One page of the index. Without `contains`, `total` is every mailbox
 * holding mail; with it, the matches among the mailboxes the search looked
 * at, which are all of them from the cursor on unless `partial`.
 */
export interface MailboxPage {
  readonly total: number;
  readonly entries: MailboxEntry[];
  /** Where the next page starts, when there is more to see. */
  readonly next?: string | undefined;
  /** The search stopped at its window (INDEX_SEARCH_WINDOW) before the end of the index. */
  readonly partial: boolean;
  /** Index entries looked at to answer (the bound's test reads it). */
  readonly visited: number;
}

export interface EvictionRecord {
  readonly count: number;
  readonly newestId: string;
}

export interface MailStore {
  /** `memory` or the Redis URL without its password, for logs and refusals. */
  readonly description: string;
  /** Live messages across all mailboxes. */
  count(): Awaitable<number>;
  /**
   * Stores one copy per mailbox key (keys validated and lower-cased;
   * duplicates stored once) and one copy of the body. When it resolves,
   * readers (of every server sharing the store) see the mail.
   */
  deliver(mailboxes: readonly string[], raw: Buffer, envelopeFrom?: string): Awaitable<StoredMessage[]>;
  /** Newest first, at most `limit`; with `beforeId`, only messages whose id sorts before it. */
  list(mailbox: string, limit: number, beforeId?: string): Awaitable<StoredMessage[]>;
  /** Newest first, the messages whose id sorts after `sinceId` (all when undefined). */
  newerThan(mailbox: string, sinceId: string | undefined): Awaitable<StoredMessage[]>;
  get(mailbox: string, id: string): Awaitable<StoredMessage | undefined>;
  /** True when the message existed in that mailbox and is now gone. */
  delete(mailbox: string, id: string): Awaitable<boolean>;
  /** Removes every message of the mailbox; returns how many there were. */
  deleteMailbox(mailbox: string): Awaitable<number>;
  /** What a server-side wait hangs on; returns the unsubscribe function. */
  onArrival(mailbox: string, listener: ArrivalListener): () => void;
  /**
   * Told of every arrival and removal in any mailbox (a shared store: made
   * through any server), for the web UI's event stream; returns the
   * unsubscribe function.
   */
  watch(listener: ChangeListener): () => void;
  /**
   * The mailboxes holding mail, the newest arrival first, one page
   * (MailboxQuery), from an index kept as mail comes and goes: a call
   * looks at `limit` entries, or INDEX_SEARCH_WINDOW with `contains`,
   * never at every mailbox.
   */
  mailboxes(query: MailboxQuery): Awaitable<MailboxPage>;
  /** Drops messages older than the retention period. */
  expire(): Awaitable<void>;
  /** What the global cap evicted from `mailbox`, if anything. */
  evictedFrom(mailbox: string): Awaitable<EvictionRecord | undefined>;
  /** Lets go of connections; the memory store has none. */
  close(): Promise<void>;
}
