// The message store: mailboxes keyed by address, messages in arrival order.
//
// Costs: delivering is O(recipients); listing is O(limit) for one address
// (newest first, walking back from the tail of that mailbox; a page older
// than an id adds a binary search); fetching and
// deleting by id are O(1). Expiry and the global cap pop the oldest messages
// from one arrival-ordered queue, so they cost O(messages removed).
//
// Removed messages are tombstoned in place and squeezed out once tombstones
// outnumber live entries, which keeps every operation amortised O(1) per message.
import type { WallClock } from '../base/clock.js';
import { createIdSource, type IdSource } from './ids.js';
import {
  INDEX_SEARCH_WINDOW,
  type ArrivalListener,
  type ChangeListener,
  type EvictionRecord,
  type MailboxPage,
  type MailboxQuery,
  type MailStore,
  type StoreChange,
} from './mail-store.js';
import { MailboxIndex } from './mailbox-index.js';
import type { StoredMessage } from '../base/stored-message.js';
import { MessageContent, ParseCache } from './message-content.js';
import { addKeyedListener } from './keyed-listeners.js';
import { ByteBudget } from './byte-budget.js';

export type { ArrivalListener, ChangeListener, MailboxEntry, RemovalReason, StoreChange } from './mail-store.js';
export type { StoredMessage } from '../base/stored-message.js';

// Eviction records are kept for this many mailboxes, the most recent ones.
const MAX_EVICTION_RECORDS = 100_000;

export interface StoreOptions {
  readonly clock: WallClock;
  readonly retention: number;
  readonly maxMessages: number;
  /** Cap on the bytes held (byte-budget.ts); the oldest is evicted first, like `maxMessages`. Default: none. */
  readonly maxStoreBytes?: number;
  /** Called for every message the global cap pushed out. */
  readonly onEvict?: (message: StoredMessage) => void;
  /** Called when an arrival listener throws; the store itself carries on. */
  readonly onListenerError?: (error: unknown) => void;
  /** How many mailboxes a `contains` search of the index looks at per call (tests move it). Default INDEX_SEARCH_WINDOW. */
  readonly indexSearchWindow?: number;
}

/** An array used as a queue with tombstones: push at the tail, drop from the head. */
// The slots before `head` are cleared as it passes them: a removed message
// must not stay reachable (with its source) from a queue that is rarely
// compacted, as a small mailbox's queue is when the cap keeps trimming it.
class MessageQueue {
  items: (StoredMessage | undefined)[] = [];
  head = 0;
  live = 0;

  /** `key`: the mailbox's key, which every message filed here shares (one string, not one per message). */
  constructor(readonly key = '') {}

  push(message: StoredMessage): void {
    this.items.push(message);
    this.live++;
  }

  /** Call after marking a member removed. */
  forget(): void {
    this.live--;
    const { items } = this;
    while (this.head < items.length && items[this.head]!.removed) items[this.head++] = undefined;
    const occupied = items.length - this.head;
    if (occupied > 2 * this.live + 32) {
      this.items = items.slice(this.head).filter((m) => !m!.removed);
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > items.length) {
      this.items = items.slice(this.head);
      this.head = 0;
    }
  }

  /** The newest live message, without a list. */
  newestLive(): StoredMessage | undefined {
    for (let i = this.items.length - 1; i >= this.head; i--) {
      const message = this.items[i]!;
      if (!message.removed) return message;
    }
    return undefined;
  }

  oldest(): StoredMessage | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** Newest first, every live message whose id sorts after `sinceId` (all of them when undefined). */
  newerThan(sinceId: string | undefined): StoredMessage[] {
    const out: StoredMessage[] = [];
    const { items } = this;
    for (let i = items.length - 1; i >= this.head; i--) {
      const message = items[i]!;
      if (sinceId !== undefined && message.id <= sinceId) break;
      if (!message.removed) out.push(message);
    }
    return out;
  }

  /** Newest first, at most `limit` live messages, only those whose id sorts before `beforeId` when given. */
  newest(limit: number, beforeId?: string): StoredMessage[] {
    const out: StoredMessage[] = [];
    const { items } = this;
    const from = beforeId === undefined ? items.length - 1 : this.#lastBefore(beforeId);
    for (let i = from; i >= this.head && out.length < limit; i--) {
      const message = items[i]!;
      if (!message.removed) out.push(message);
    }
    return out;
  }

  /** The index of the last item whose id sorts before `id` (ids grow with arrival): a binary search. */
  #lastBefore(id: string): number {
    let low = this.head;
    let high = this.items.length; // items[high..] sort at or after id
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.items[mid]!.id < id) low = mid + 1;
      else high = mid;
    }
    return low - 1;
  }
}

export class MessageStore implements MailStore {
  readonly description = 'memory';
  readonly #options: StoreOptions;
  readonly #nextId: IdSource;
  readonly #arrivals = new MessageQueue();
  readonly #mailboxes = new Map<string, MessageQueue>();
  readonly #byId = new Map<string, StoredMessage>();
  readonly #listeners = new Map<string, Set<ArrivalListener>>();
  readonly #watchers = new Set<ChangeListener>();
  readonly #parses = new ParseCache();
  /** Per mailbox, what the cap pushed out (most recent mailboxes only, like the request counts). */
  readonly #evicted = new Map<string, { count: number; newestId: string }>();
  readonly #held = new ByteBudget();
  readonly #index = new MailboxIndex();
  /** The envelope sender of the last mail delivered (deliver). */
  #lastSender = '';

  constructor(options: StoreOptions) {
    this.#options = options;
    this.#nextId = createIdSource(options.clock.now());
  }

  /** The bytes held, as the byte cap counts them (byte-budget.ts). */
  get bytesHeld(): number {
    return this.#held.bytes;
  }

  /** Live messages across all mailboxes. */
  get size(): number {
    this.expire();
    return this.#arrivals.live;
  }

  count(): number {
    return this.size;
  }

  async close(): Promise<void> {}

  /**
   * Stores one copy per mailbox key (keys must be validated and lower-cased;
   * duplicates are stored once). Synchronous: when it returns, readers see the mail.
   */
  deliver(mailboxes: readonly string[], raw: Buffer, envelopeFrom = ''): StoredMessage[] {
    this.expire();
    // Mail mostly comes from one sender after another: its address is kept once, not once per message.
    if (envelopeFrom === this.#lastSender) envelopeFrom = this.#lastSender;
    else this.#lastSender = envelopeFrom;
    const content = new MessageContent(raw, envelopeFrom, this.#parses);
    const receivedAt = this.#options.clock.now();
    const stored: StoredMessage[] = [];
    for (const key of new Set(mailboxes)) {
      let queue = this.#mailboxes.get(key);
      if (!queue) this.#mailboxes.set(key, (queue = new MessageQueue(key)));
      const message: StoredMessage = { id: this.#nextId(), mailbox: queue.key, receivedAt, size: raw.length, content, removed: false };
      this.#byId.set(message.id, message);
      this.#held.add(content, raw.length);
      this.#arrivals.push(message);
      queue.push(message);
      this.#index.file(message.mailbox, message.id);
      stored.push(message);
    }
    this.#enforceCap();
    for (const message of stored) {
      if (!message.removed) this.#announce(message);
    }
    return stored;
  }

  /**
   * Newest first, at most `limit`; with `beforeId`, only messages whose id
   * sorts before it (the next page down). Ids sort by arrival, so this also
   * works for an id that expired or was deleted. O(log n + limit).
   */
  list(mailbox: string, limit: number, beforeId?: string): StoredMessage[] {
    this.expire();
    return this.#mailboxes.get(mailbox)?.newest(limit, beforeId) ?? [];
  }

  /**
   * Newest first, the messages whose id sorts after `sinceId` (every message
   * when undefined). Ids sort by arrival, so this also works for an id that
   * expired or was deleted. O(messages returned).
   */
  newerThan(mailbox: string, sinceId: string | undefined): StoredMessage[] {
    this.expire();
    return this.#mailboxes.get(mailbox)?.newerThan(sinceId) ?? [];
  }

  get(mailbox: string, id: string): StoredMessage | undefined {
    this.expire();
    const message = this.#byId.get(id);
    return message && message.mailbox === mailbox ? message : undefined;
  }

  /** True when the message existed in that mailbox and is now gone. */
  delete(mailbox: string, id: string): boolean {
    const message = this.get(mailbox, id);
    if (!message) return false;
    this.#remove(message);
    return true;
  }

  /** Removes every message of the mailbox; returns how many there were. */
  deleteMailbox(mailbox: string): number {
    this.expire();
    const queue = this.#mailboxes.get(mailbox);
    if (!queue) return 0;
    const messages = queue.newest(Infinity);
    for (const message of messages) this.#remove(message);
    return messages.length;
  }

  /**
   * Calls `listener` synchronously for each message stored in `mailbox` from now
   * on (after it is visible to readers). Returns the unsubscribe function. This
   * is what a server-side wait hangs on: the arrival itself wakes it.
   */
  onArrival(mailbox: string, listener: ArrivalListener): () => void {
    return addKeyedListener(this.#listeners, mailbox, listener);
  }

  /**
   * Calls `listener` synchronously for every arrival and removal in any
   * mailbox (after readers see it). Returns the unsubscribe function. With
   * no watcher this costs a set-size check per change.
   */
  watch(listener: ChangeListener): () => void {
    this.#watchers.add(listener);
    return () => void this.#watchers.delete(listener);
  }

  /**
   * One page of the mailboxes holding mail, the newest arrival first
   * (MailboxQuery), from the index kept as mail comes and goes
   * (mailbox-index.ts): O(limit), or O(the search window) with `contains`,
   * whatever the number of mailboxes.
   */
  mailboxes(query: MailboxQuery): MailboxPage {
    this.expire();
    return this.#index.page(query, this.#options.indexSearchWindow ?? INDEX_SEARCH_WINDOW, (mailbox, newestId) => ({
      count: this.#mailboxes.get(mailbox)!.live,
      newest: this.#byId.get(newestId)!,
    }));
  }

  /** Drops messages older than the retention period. Cheap when nothing expired. */
  expire(): void {
    const cutoff = this.#options.clock.now() - this.#options.retention;
    for (let oldest = this.#arrivals.oldest(); oldest && oldest.receivedAt <= cutoff; oldest = this.#arrivals.oldest()) {
      this.#remove(oldest);
    }
  }

  /** What the global cap evicted from `mailbox`, if anything (ids sort by arrival, so `newestId` is the last one). */
  evictedFrom(mailbox: string): EvictionRecord | undefined {
    const entry = this.#evicted.get(mailbox);
    return entry && { ...entry };
  }

  #enforceCap(): void {
    const maxBytes = this.#options.maxStoreBytes ?? Infinity;
    while (this.#arrivals.live > this.#options.maxMessages || this.#held.bytes > maxBytes) {
      const oldest = this.#arrivals.oldest();
      if (!oldest) break;
      this.#remove(oldest);
      this.#noteEviction(oldest);
      this.#options.onEvict?.(oldest);
    }
  }

  #noteEviction(message: StoredMessage): void {
    const entry = this.#evicted.get(message.mailbox);
    this.#evicted.delete(message.mailbox); // re-inserted last: the map's order is recency
    this.#evicted.set(message.mailbox, { count: (entry?.count ?? 0) + 1, newestId: message.id });
    if (this.#evicted.size > MAX_EVICTION_RECORDS) this.#evicted.delete(this.#evicted.keys().next().value!);
  }

  #remove(message: StoredMessage): void {
    if (message.removed) return;
    message.removed = true;
    this.#byId.delete(message.id);
    // every message of this store carries the MessageContent its deliver made
    this.#held.remove(message.content as MessageContent, message.size);
    this.#arrivals.forget();
    const queue = this.#mailboxes.get(message.mailbox);
    if (queue) {
      queue.forget();
      if (queue.live === 0) this.#mailboxes.delete(message.mailbox);
      // only the newest's removal moves the mailbox in the index (expiry and the cap take the oldest)
      if (this.#index.filedAt(message.mailbox) === message.id) this.#index.file(message.mailbox, queue.newestLive()?.id);
    }
    if (this.#watchers.size > 0) this.#tell({ type: 'removed', message });
  }

  #tell(change: StoreChange): void {
    for (const watcher of [...this.#watchers]) {
      try {
        watcher(change);
      } catch (error) {
        this.#options.onListenerError?.(error);
      }
    }
  }

  #announce(message: StoredMessage): void {
    if (this.#watchers.size > 0) this.#tell({ type: 'arrived', message });
    const listeners = this.#listeners.get(message.mailbox);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch (error) {
        this.#options.onListenerError?.(error);
      }
    }
  }
}
