// The Redis store: the MailStore (mail-store.ts) kept in one Redis, so any
// number of mailroom servers pointed at it act as one service. Mail taken in
// by one is listed, fetched and deleted through any other; a wait held on one
// wakes when another stores (pub/sub, scripts/store.lua's `P:arrived`); the
// global cap, retention and the id counter are enforced inside Redis.
//
// Each operation is one call of the store's Lua script (atomic, one round
// trip). A body is stored once per message whatever its recipients; the
// list's summary is made at intake (the fast path of fast-summary.ts, about
// a microsecond) and kept beside it, so listing never moves sources. Sources
// read on this server are kept in a small cache (bodies never change).
import { hostname } from 'node:os';
import type { Logger } from '../base/log.js';
import type { WallClock } from '../base/clock.js';
import {
  INDEX_SEARCH_WINDOW,
  type ArrivalListener,
  type ChangeListener,
  type EvictionRecord,
  type MailboxEntry,
  type MailboxPage,
  type MailboxQuery,
  type MailStore,
} from '../store/mail-store.js';
import type { MessageBody, StoredMessage } from '../base/stored-message.js';
import { MessageContent, ParseCache } from '../store/message-content.js';
import type { ParsedMail, ParsedSummary } from '../base/parsed-mail.js';
import type { RequestBudget } from '../budgets/budget.js';
import { RedisBudget } from './redis-budget.js';
import { RedisLabStore, type DeliveryLog } from './redis-lab.js';
import { RedisConnection, type RedisReply } from './redis-connection.js';
import { luaScript } from './lua-scripts.js';
import { decodeSummary, encodeSummary } from './summary-record.js';
import { addKeyedListener } from '../store/keyed-listeners.js';
import type { RedisWebhookStore } from './redis-webhook-store.js';

const STORE_SCRIPT = luaScript('store');

export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port/db` (or `rediss://`). */
  readonly url: string;
  readonly clock: WallClock;
  readonly retention: number;
  readonly maxMessages: number;
  readonly logger: Logger;
  /** Key prefix, so several services (or test runs) can share one Redis. Default `mailroom`. */
  readonly prefix?: string | undefined;
  /** Called for every message the global cap pushed out of a delivery made here. */
  readonly onEvict?: ((message: StoredMessage) => void) | undefined;
  readonly onListenerError?: ((error: unknown) => void) | undefined;
  readonly connectTimeoutMs?: number | undefined;
  /** How long a command may go unanswered (redis-connection.ts); tests shorten it. */
  readonly commandTimeoutMs?: number | undefined;
  /** How many mailboxes a `contains` search of the index looks at per call (tests move it). Default INDEX_SEARCH_WINDOW. */
  readonly indexSearchWindow?: number | undefined;
}

/** Redis forgets a key this long after the retention, whether or not any server is left to sweep it. */
const EXPIRY_MARGIN_MS = 60_000;
const BODY_CACHE_ENTRIES = 256;
const BODY_CACHE_BYTES = 64 * 1024 * 1024;

interface Announcement {
  readonly r: string;
  readonly id: string;
  readonly mb: string;
  readonly at: string;
  readonly size: number;
  readonly body: string;
  readonly from: string;
  readonly s: string;
}

/** A stored message's body as a listing sees it: the summary at hand, the source fetched on first use. */
class SharedBody implements MessageBody {
  readonly envelopeFrom: string;
  readonly summaryIfKnown: ParsedSummary;
  readonly #load: () => Promise<MessageContent>;

  constructor(envelopeFrom: string, summary: ParsedSummary, load: () => Promise<MessageContent>) {
    this.envelopeFrom = envelopeFrom;
    this.summaryIfKnown = summary;
    this.#load = load;
  }

  summary(): Promise<ParsedSummary> {
    return Promise.resolve(this.summaryIfKnown);
  }

  async parsed(): Promise<ParsedMail> {
    return (await this.#load()).parsed();
  }

  async source(): Promise<Buffer> {
    return (await this.#load()).raw;
  }

  async latin1(): Promise<string> {
    return (await this.#load()).latin1();
  }
}

type Subscriber = Awaited<ReturnType<RedisConnection['subscriber']>>;

/** A body stored as one string (scripts/store.lua `packedBody`), its id marked by a leading `s`. */
const isPackedBody = (bodyId: string): boolean => bodyId.startsWith('s');

/** [source, envelope sender, summary] of a packed body: `<from's length> <summary's length>\n`, from, summary, source. */
function unpackBody(packed: Buffer): [Buffer, Buffer, Buffer] | [undefined, undefined, undefined] {
  const newline = packed.indexOf(0x0a);
  const match = /^(\d+) (\d+)$/.exec(packed.toString('latin1', 0, Math.max(newline, 0)));
  if (newline < 0 || !match) return [undefined, undefined, undefined];
  const fromEnd = newline + 1 + Number(match[1]);
  const summaryEnd = fromEnd + Number(match[2]);
  return [packed.subarray(summaryEnd), packed.subarray(newline + 1, fromEnd), packed.subarray(fromEnd, summaryEnd)];
}

const text = (value: RedisReply | undefined): string => (Buffer.isBuffer(value) ? value.toString('utf8') : value == null ? '' : String(value));

export class RedisMailStore implements MailStore {
  readonly description: string;
  readonly #connection: RedisConnection;
  readonly #subscriber: Subscriber;
  readonly #options: RedisStoreOptions;
  readonly #prefix: string;
  readonly #replica = `${hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  readonly #listeners = new Map<string, Set<ArrivalListener>>();
  readonly #watchers = new Set<ChangeListener>();
  readonly #parses = new ParseCache();
  readonly #bodies = new Map<string, MessageContent>();
  #bodyBytes = 0;
  /** Told each time commands go through again after a break (the webhook store reads what it may have missed). */
  readonly #reconnected = new Set<() => void>();

  private constructor(connection: RedisConnection, subscriber: Subscriber, options: RedisStoreOptions) {
    this.#connection = connection;
    this.#subscriber = subscriber;
    this.#options = options;
    this.#prefix = options.prefix ?? 'mailroom';
    this.description = connection.description;
  }

  static async open(options: RedisStoreOptions): Promise<RedisMailStore> {
    const connection = await RedisConnection.open(options.url, options.logger, options.connectTimeoutMs, options.commandTimeoutMs);
    // After a break the client renews the subscription; what was published
    // meanwhile is lost, so every held wait looks again.
    const opened: { store?: RedisMailStore } = {};
    let subscriber;
    try {
      subscriber = await connection.subscriber(() => opened.store?.lookAgain());
    } catch (error) {
      await connection.close();
      throw error;
    }
    const store = (opened.store = new RedisMailStore(connection, subscriber, options));
    await store.#listen();
    return store;
  }

  async count(): Promise<number> {
    return Number(await this.#call('count'));
  }

  async deliver(mailboxes: readonly string[], raw: Buffer, envelopeFrom = ''): Promise<StoredMessage[]> {
    const unique = [...new Set(mailboxes)];
    return (await this.#deliver('deliver', unique, raw, envelopeFrom, unique))!;
  }

  /**
   * `deliver` for the deferral lab kept in this Redis (redis-lab.ts), with
   * its look-up and its log in the same script run: unless one of
   * `mailboxes` (distinct) has rules, the mail is stored and `log` (one
   * accepted attempt per mailbox, in their order) written to the attempt
   * log; undefined when one has rules, and nothing is done.
   */
  async deliverLogged(mailboxes: readonly string[], raw: Buffer, envelopeFrom: string, log: DeliveryLog): Promise<StoredMessage[] | undefined> {
    const entries = log.entries.flatMap((entry, n) => [mailboxes[n]!, String(entry.at), entry.json]);
    return this.#deliver('deliverLogged', mailboxes, raw, envelopeFrom, [String(log.maxPerAddress), String(log.maxAttempts), ...entries]);
  }

  /** Runs a delivery to `unique` (`op` `deliver` or `deliverLogged`, `tail` the script's arguments after the summary); undefined when the script answers `ruled`. */
  async #deliver(op: string, unique: readonly string[], raw: Buffer, envelopeFrom: string, tail: readonly string[]): Promise<StoredMessage[] | undefined> {
    const content = new MessageContent(raw, envelopeFrom, this.#parses);
    const summary = await content.summary();
    const receivedAt = this.#now();
    const max = String(this.#options.maxMessages === Infinity ? -1 : this.#options.maxMessages);
    const reply = (await this.#call(op, [max, this.#replica, envelopeFrom, raw, encodeSummary(summary), ...tail], receivedAt)) as RedisReply[];
    if (reply.length === 1 && text(reply[0]) === 'ruled') return undefined;
    const bodyId = text(reply[0]);
    this.#remember(bodyId, content);
    const body = new SharedBody(envelopeFrom, summary, () => Promise.resolve(content));
    // [bodyId, the copies' ids in order, '--', then (id, mailbox, at) of each message the cap pushed out]
    const ids = reply.slice(1, 1 + unique.length).map(text);
    const evicted = new Set<string>();
    // The eviction reporter reads only a victim's id, mailbox and time: its body is not fetched.
    for (let i = 2 + unique.length; i + 2 < reply.length; i += 3) {
      const victim = { id: text(reply[i]), mailbox: text(reply[i + 1]), receivedAt: Number(text(reply[i + 2])), size: 0, content: body, removed: true };
      evicted.add(victim.id);
      this.#options.onEvict?.(victim);
    }
    const stored = unique.map((mailbox, n): StoredMessage => {
      const id = ids[n]!;
      return { id, mailbox, receivedAt, size: raw.length, content: body, removed: evicted.has(id) };
    });
    for (const message of stored) if (!message.removed) this.#announce(message);
    return stored;
  }

  async list(mailbox: string, limit: number, beforeId?: string): Promise<StoredMessage[]> {
    return this.#described(mailbox, (await this.#call('list', [mailbox, String(limit), beforeId ?? ''])) as RedisReply[]);
  }

  async newerThan(mailbox: string, sinceId: string | undefined): Promise<StoredMessage[]> {
    return this.#described(mailbox, (await this.#call('newer', [mailbox, sinceId ?? ''])) as RedisReply[]);
  }

  async get(mailbox: string, id: string): Promise<StoredMessage | undefined> {
    const reply = (await this.#call('get', [mailbox, id])) as RedisReply[];
    if (reply.length === 0) return undefined;
    const bodyId = text(reply[3]);
    const raw = reply[6];
    if (!this.#bodies.has(bodyId) && Buffer.isBuffer(raw)) {
      this.#remember(bodyId, new MessageContent(raw, text(reply[4]), this.#parses, decodeSummary(text(reply[5]))));
    }
    return this.#described(mailbox, reply.slice(0, 6))[0];
  }

  async delete(mailbox: string, id: string): Promise<boolean> {
    return Number(await this.#call('delete', [mailbox, id])) === 1;
  }

  async deleteMailbox(mailbox: string): Promise<number> {
    return Number(await this.#call('deleteMailbox', [mailbox]));
  }

  onArrival(mailbox: string, listener: ArrivalListener): () => void {
    return addKeyedListener(this.#listeners, mailbox, listener);
  }

  /** Told through Redis (pub/sub), so a change made through any server reaches every server's watchers, a little after it is visible. */
  watch(listener: ChangeListener): () => void {
    this.#watchers.add(listener);
    return () => void this.#watchers.delete(listener);
  }

  /** One page of the index, from the `P:boxes` sorted set kept by every delivery and removal (scripts/store.lua). */
  async mailboxes(query: MailboxQuery): Promise<MailboxPage> {
    const window = String(this.#options.indexSearchWindow ?? INDEX_SEARCH_WINDOW);
    const reply = (await this.#call('mailboxes', [String(query.limit), query.contains ?? '', query.cursor ?? '', window])) as RedisReply[];
    // [total, next ('' for none), partial (0/1), visited, then per mailbox: key, count, its newest described (6)]
    const entries: MailboxEntry[] = [];
    for (let i = 4; i + 7 < reply.length; i += 8) {
      const mailbox = text(reply[i]);
      entries.push({ mailbox, count: Number(reply[i + 1]), newest: this.#described(mailbox, reply.slice(i + 2, i + 8))[0]! });
    }
    return { total: Number(reply[0]), entries, next: text(reply[1]) || undefined, partial: Number(reply[2]) === 1, visited: Number(reply[3]) };
  }

  async expire(): Promise<void> {
    await this.#call('expire');
  }

  async evictedFrom(mailbox: string): Promise<EvictionRecord | undefined> {
    const [count, newest] = (await this.#call('evicted', [mailbox])) as RedisReply[];
    return count == null ? undefined : { count: Number(text(count)), newestId: text(newest) };
  }

  /** A per-address budget shared by every server on this Redis (`name`: which one, e.g. `list`). */
  budget(name: string, perSecond: number): RequestBudget {
    return new RedisBudget({ connection: this.#connection, perSecond, clock: this.#options.clock, prefix: this.#prefix, name });
  }

  /**
   * The SMTP deferral lab's state, shared by every server on this Redis
   * (redis-lab.ts), on this store's connection; `caps` moves the attempt
   * log's bounds (tests of them).
   */
  lab(caps: { readonly maxAttemptsPerAddress?: number; readonly maxAttempts?: number } = {}): RedisLabStore {
    const { clock, retention, logger } = this.#options;
    return new RedisLabStore({
      connection: this.#connection,
      store: this,
      prefix: this.#prefix,
      clock,
      retention,
      expiryMarginMs: EXPIRY_MARGIN_MS,
      logger,
      ...caps,
    });
  }

  /**
   * The webhooks kept in this Redis (redis-webhook-store.ts), shared by every
   * server on it, on this store's connections; `options` move its bounds
   * (tests).
   */
  async webhooks(options: { readonly maxDeliveriesPerWebhook?: number; readonly leaseMs?: number } = {}): Promise<RedisWebhookStore> {
    const { RedisWebhookStore } = await import('./redis-webhook-store.js');
    return RedisWebhookStore.open({
      connection: this.#connection,
      subscriber: this.#subscriber,
      prefix: this.#prefix,
      clock: this.#options.clock,
      logger: this.#options.logger,
      onReconnect: (listener) => {
        this.#reconnected.add(listener);
        return () => void this.#reconnected.delete(listener);
      },
      // what the memory store's events do: the mail as the store has it now, nothing once it is gone
      readSource: async (mailbox, id) => (await this.get(mailbox, id))?.content.source(),
      ...options,
    });
  }

  async close(): Promise<void> {
    await Promise.all([this.#subscriber.close().catch(() => this.#subscriber.destroy()), this.#connection.close()]);
  }

  #now(): number {
    return this.#options.clock.now();
  }

  #call(op: string, args: readonly (string | Buffer)[] = [], now = this.#now()): Promise<RedisReply> {
    const { retention } = this.#options;
    return this.#connection.script(STORE_SCRIPT, [], [this.#prefix, op, String(now), String(retention), String(retention + EXPIRY_MARGIN_MS), ...args]);
  }

  /** Messages from the script's flat answer: id, at, size, body, from, summary per message. */
  #described(mailbox: string, reply: readonly RedisReply[]): StoredMessage[] {
    const out: StoredMessage[] = [];
    for (let i = 0; i + 5 < reply.length; i += 6) {
      const bodyId = text(reply[i + 3]);
      const body = new SharedBody(text(reply[i + 4]), decodeSummary(text(reply[i + 5])), () => this.#body(bodyId));
      out.push({ id: text(reply[i]), mailbox, receivedAt: Number(text(reply[i + 1])), size: Number(text(reply[i + 2])), content: body, removed: false });
    }
    return out;
  }

  /** A body's source, from this server's cache or from Redis. */
  async #body(bodyId: string): Promise<MessageContent> {
    const cached = this.#bodies.get(bodyId);
    if (cached) return cached;
    const [raw, from, summary] = await this.#readBody(bodyId);
    // Gone between the listing and now (deleted, expired): what was listed is all there is.
    const content = new MessageContent(
      Buffer.isBuffer(raw) ? raw : Buffer.alloc(0),
      text(from),
      this.#parses,
      summary ? decodeSummary(text(summary)) : undefined,
    );
    if (Buffer.isBuffer(raw)) this.#remember(bodyId, content);
    return content;
  }

  /** A body's source, envelope sender and summary (undefined, each, when it is gone); scripts/store.lua says how it is kept. */
  async #readBody(bodyId: string): Promise<[RedisReply | undefined, RedisReply | undefined, RedisReply | undefined]> {
    const key = `${this.#prefix}:b:${bodyId}`;
    if (!isPackedBody(bodyId)) {
      const [raw, from, summary] = (await this.#connection.run(['HMGET', key, 'raw', 'from', 'summary'])) as RedisReply[];
      return [raw, from, summary];
    }
    const packed = await this.#connection.run(['GET', key]);
    return Buffer.isBuffer(packed) ? unpackBody(packed) : [undefined, undefined, undefined];
  }

  #remember(bodyId: string, content: MessageContent): void {
    if (this.#bodies.has(bodyId)) return;
    this.#bodies.set(bodyId, content);
    this.#bodyBytes += content.size;
    for (const [oldest, old] of this.#bodies) {
      if (this.#bodies.size <= BODY_CACHE_ENTRIES && this.#bodyBytes <= BODY_CACHE_BYTES) break;
      if (oldest === bodyId) break;
      this.#bodies.delete(oldest);
      this.#bodyBytes -= old.size;
    }
  }

  /** Once commands go through again (the subscription may be back first), every held wait looks. */
  private lookAgain(tries = 0): void {
    if (!this.#connection.isReady && tries < 200) {
      setTimeout(() => this.lookAgain(tries + 1), 50).unref();
      return;
    }
    for (const listeners of this.#listeners.values()) for (const listener of [...listeners]) this.#tell(listener, undefined);
    for (const listener of [...this.#reconnected]) this.#tell(listener, undefined);
  }

  async #listen(): Promise<void> {
    await this.#subscriber.subscribe(`${this.#prefix}:removed`, (message: string) => {
      if (this.#watchers.size === 0) return;
      let note: { id: string; mb: string };
      try {
        note = JSON.parse(message) as { id: string; mb: string };
      } catch (error) {
        this.#options.onListenerError?.(error);
        return;
      }
      const gone = new SharedBody('', { from: '', to: [], subject: '', preview: '' }, () => this.#body(''));
      this.#tellWatchers({ type: 'removed', message: { id: note.id, mailbox: note.mb, receivedAt: 0, size: 0, content: gone, removed: true } });
    });
    await this.#subscriber.subscribe(`${this.#prefix}:arrived`, (message: string) => {
      // Every server hears every arrival: read no further than whether anyone here waits for it.
      if (this.#listeners.size === 0 && this.#watchers.size === 0) return;
      let note: Announcement;
      let summary: ParsedSummary;
      try {
        note = JSON.parse(message) as Announcement;
        const own = note.r === this.#replica;
        if ((own || !this.#listeners.has(note.mb)) && this.#watchers.size === 0) return;
        summary = decodeSummary(note.s);
      } catch (error) {
        // not ours to read (another program publishing on the channel): no arrival
        this.#options.onListenerError?.(error);
        return;
      }
      const own = note.r === this.#replica;
      const body = new SharedBody(note.from, summary, () => this.#body(note.body));
      const arrived: StoredMessage = { id: note.id, mailbox: note.mb, receivedAt: Number(note.at), size: note.size, content: body, removed: false };
      // this server's own deliveries woke its waits already, as they returned
      if (!own) this.#announce(arrived);
      this.#tellWatchers({ type: 'arrived', message: arrived });
    });
  }

  #tellWatchers(change: Parameters<ChangeListener>[0]): void {
    for (const watcher of [...this.#watchers]) {
      try {
        watcher(change);
      } catch (error) {
        this.#options.onListenerError?.(error);
      }
    }
  }

  #announce(message: StoredMessage): void {
    const listeners = this.#listeners.get(message.mailbox);
    if (!listeners) return;
    for (const listener of [...listeners]) this.#tell(listener, message);
  }

  #tell(listener: ArrivalListener, message: StoredMessage | undefined): void {
    try {
      listener(message);
    } catch (error) {
      this.#options.onListenerError?.(error);
    }
  }
}
