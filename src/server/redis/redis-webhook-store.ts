// The webhooks kept in Redis (webhooks/webhook-store.ts, `SharedWebhookStore`),
// beside the Redis mail store and on its connection, so every server on
// that Redis is one webhook service: a webhook registered through one is
// known to all (each keeps a copy of the registrations in memory, told of
// changes through Redis pub/sub, since `subscribers()` is asked on the SMTP
// path of every mail), an event queued by the server that took the mail in
// is delivered by whichever server claims its attempt first, and the log and
// the dead letters read the same through any of them. Each call is one run
// of scripts/webhook.lua (atomic, one round trip).
//
// Attempts are handed out under a lease (`LEASE_MS`), renewed while the
// attempt is in flight: a server killed mid-attempt leaves the event to
// another once its lease runs out, and that server records the lost attempt
// first (`Claim.lost`).
import { hostname } from 'node:os';
import type { Logger } from '../base/log.js';
import type { WallClock } from '../base/clock.js';
import { eventOf, payloadOf, type EventRecord, type SourceReader } from '../webhooks/events.js';
import type { EventPayload } from '../webhooks/delivery-job.js';
import type { Webhook } from '../webhooks/registration.js';
import {
  fromDeliveryRecord,
  MAX_DELIVERIES_PER_WEBHOOK,
  RegistrationIndex,
  toDeliveryRecord,
  type Claim,
  type ClaimBatch,
  type Delivery,
  type DeliveryRecord,
  type SharedWebhookStore,
} from '../webhooks/webhook-store.js';
import type { WebhookEventType } from '../../contract/webhooks.js';
import { OUT_OF_ORDER_HOLD_MS } from '../webhooks/dispatcher.js';
import { waitsForConfirmation } from '../webhooks/subscription.js';
import { SEND_LOG_MAX, suppressionKey, type LastSend } from '../webhooks/provider-events/send-log.js';
import type { ProviderFormat } from '../../contract/provider-events.js';
import type { RedisConnection, RedisReply } from './redis-connection.js';
import { luaScript } from './lua-scripts.js';

const WEBHOOK_SCRIPT = luaScript('webhook');

/** How long a claimed attempt is a server's own without a renewal; renewed every third of it while in flight. */
export const LEASE_MS = 5_000;

type Subscriber = Awaited<ReturnType<RedisConnection['subscriber']>>;

export interface RedisWebhookStoreOptions {
  readonly connection: RedisConnection;
  /** The mail store's subscription connection: this store listens on it too. */
  readonly subscriber: Subscriber;
  readonly prefix: string;
  readonly clock: WallClock;
  readonly logger: Logger;
  /** Deliveries kept per webhook (tests of the bound). */
  readonly maxDeliveriesPerWebhook?: number | undefined;
  /** The lease on a claimed attempt (tests of a lost one). */
  readonly leaseMs?: number | undefined;
  /** Registers `listener` to run each time the connection is back after a break. */
  readonly onReconnect: (listener: () => void) => () => void;
  /**
   * Reads a `message.received` event's source from the mail store when an
   * attempt goes (undefined once the mail expired, was evicted or deleted),
   * as the memory store's events do: an event holds nothing of its mail.
   */
  readonly readSource: SourceReader;
}

const text = (value: RedisReply | undefined): string => (Buffer.isBuffer(value) ? value.toString('utf8') : value == null ? '' : String(value));

/** A registration as Redis keeps it: the Webhook as JSON, `address` null for every address. */
function encodeWebhook(webhook: Webhook): string {
  return JSON.stringify({ ...webhook, address: webhook.address ?? null });
}

function decodeWebhook(raw: string): Webhook {
  const parsed = JSON.parse(raw) as Omit<Webhook, 'address'> & { address: string | null };
  return Object.freeze({
    ...parsed,
    address: parsed.address ?? undefined,
    events: Object.freeze<WebhookEventType[]>([...parsed.events]),
    retry: Object.freeze({ ...parsed.retry }),
  });
}

export class RedisWebhookStore implements SharedWebhookStore {
  readonly kind = 'shared';
  readonly leaseMs: number;
  readonly #connection: RedisConnection;
  readonly #options: RedisWebhookStoreOptions;
  readonly #prefix: string;
  readonly #owner = `${hostname().replace(/\s+/g, '_')}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  readonly #index = new RegistrationIndex();
  /** Each registration's place in the order they were made (Redis's), for `list()`. */
  readonly #order = new Map<string, number>();
  readonly #dueListeners = new Set<(at: number) => void>();
  readonly #removedListeners = new Set<(id: string) => void>();
  readonly #reconnectListeners = new Set<() => void>();
  /** Changes heard through pub/sub, applied one after another. */
  #changes: Promise<void> = Promise.resolve();
  readonly #unsubscribe: (() => Promise<void>)[] = [];
  #closed = false;

  private constructor(options: RedisWebhookStoreOptions) {
    this.#connection = options.connection;
    this.#options = options;
    this.#prefix = options.prefix;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
  }

  static async open(options: RedisWebhookStoreOptions): Promise<RedisWebhookStore> {
    const store = new RedisWebhookStore(options);
    await store.#listen();
    await store.#reload();
    return store;
  }

  // --- registrations: answered from memory -------------------------------

  get size(): number {
    return this.#index.size;
  }

  get(id: string): Webhook | undefined {
    return this.#index.get(id);
  }

  list(): readonly Webhook[] {
    return [...this.#index.list()].sort((a, b) => (this.#order.get(a.id) ?? 0) - (this.#order.get(b.id) ?? 0));
  }

  scopedTo(address: string): readonly Webhook[] {
    return this.#index.scopedTo(address);
  }

  subscribers(type: WebhookEventType, address: string): readonly Webhook[] {
    return this.#index.subscribers(type, address);
  }

  async add(webhook: Webhook): Promise<Webhook> {
    const encoded = encodeWebhook(webhook);
    const raw = text(await this.#call('add', [webhook.id, encoded]));
    // The object given when it is what was stored: the service tells its own registration from one another server made
    // first by identity (webhook-service.ts: only a new one is sent SNS's SubscriptionConfirmation).
    const kept = raw === encoded ? webhook : decodeWebhook(raw);
    // Known here at once; the others hear of it through Redis.
    if (!this.#index.get(kept.id)) await this.#learn(kept.id, kept);
    return kept;
  }

  async remove(id: string): Promise<Webhook | undefined> {
    const reply = await this.#call('remove', [id]);
    const known = this.#forget(id);
    return reply == null ? undefined : (known ?? decodeWebhook(text(reply)));
  }

  // --- the queue -----------------------------------------------------------

  async enqueue(event: EventRecord, targets: readonly { readonly webhookId: string; readonly dueAt: number }[]): Promise<boolean[]> {
    const record: DeliveryRecord = { event, state: 'pending', attempts: [], copy: 1, cycleAttempts: 0 };
    const args = [
      String(this.#options.maxDeliveriesPerWebhook ?? MAX_DELIVERIES_PER_WEBHOOK),
      event.id,
      JSON.stringify(record),
      event.ref.kind === 'message' ? event.ref.messageId : '',
      String(OUT_OF_ORDER_HOLD_MS),
    ];
    for (const target of targets) {
      const webhook = this.get(target.webhookId);
      // Whether it waits for a confirmed subscription is this rule's; whether it is confirmed, the script's (atomic with `confirm`).
      args.push(target.webhookId, String(target.dueAt), webhook && waitsForConfirmation(webhook, event.type) ? '1' : '0');
    }
    const reply = (await this.#call('enqueue', args)) as RedisReply[];
    return reply.map((kept) => Number(kept) === 1);
  }

  async claim(limit: number): Promise<ClaimBatch> {
    return this.#batch((await this.#call('claim', [this.#owner, String(Math.max(0, limit)), String(this.leaseMs)])) as RedisReply[], 0);
  }

  async renew(claims: readonly Claim[]): Promise<void> {
    if (claims.length === 0) return;
    const args = [String(this.leaseMs)];
    for (const claim of claims) args.push(claim.webhookId, claim.delivery.event.id, claim.token);
    await this.#call('renew', args);
  }

  async release(claims: readonly Claim[]): Promise<void> {
    if (claims.length === 0) return;
    const args: string[] = [];
    for (const claim of claims) args.push(claim.webhookId, claim.delivery.event.id, claim.token);
    await this.#call('release', args);
  }

  async complete(claim: Claim, delivery: Delivery): Promise<boolean> {
    return (await this.completeAndClaim(claim, delivery, 0)).saved;
  }

  async completeAndClaim(claim: Claim, delivery: Delivery, limit: number): Promise<{ readonly saved: boolean; readonly next: ClaimBatch }> {
    const reply = (await this.#call('complete', [
      claim.webhookId,
      delivery.event.id,
      claim.token,
      JSON.stringify(toDeliveryRecord(delivery)),
      delivery.state,
      String(delivery.nextAttemptAt ?? this.#now()),
      String(Math.max(0, limit)),
      String(this.leaseMs),
    ])) as RedisReply[];
    return { saved: Number(reply[0]) === 1, next: this.#batch(reply, 1) };
  }

  async replay(webhookId: string, eventId: string): Promise<Delivery | undefined> {
    // Read, decided here, written back only if it is still the dead letter that was read.
    const [raw] = (await this.#call('log', [webhookId, eventId])) as RedisReply[];
    if (raw === undefined) return undefined;
    const delivery = this.#delivery(webhookId, text(raw));
    if (delivery.state !== 'dead_lettered') return undefined;
    delivery.state = 'pending';
    delivery.cycleAttempts = 0;
    delivery.deadAt = undefined;
    delivery.nextAttemptAt = this.#now();
    const again = await this.#call('replay', [webhookId, eventId, text(raw), JSON.stringify(toDeliveryRecord(delivery))]);
    return Number(again) === 1 ? delivery : undefined;
  }

  async deliveries(webhookId: string): Promise<readonly Delivery[]> {
    const reply = (await this.#call('log', [webhookId])) as RedisReply[];
    return reply.map((raw) => this.#delivery(webhookId, text(raw)));
  }

  async delivery(webhookId: string, eventId: string): Promise<Delivery | undefined> {
    const [raw] = (await this.#call('log', [webhookId, eventId])) as RedisReply[];
    return raw === undefined ? undefined : this.#delivery(webhookId, text(raw));
  }

  async confirm(webhookId: string): Promise<boolean> {
    return Number(await this.#call('confirm', [webhookId])) === 1;
  }

  async confirmedAt(webhookId: string): Promise<number | undefined> {
    const at = await this.#call('confirmed', [webhookId]);
    return at === null ? undefined : Number(text(at));
  }

  // --- the provider send log (webhooks/provider-events/send-log.ts) ---------

  async sent(address: string, last: LastSend): Promise<string | undefined> {
    const key = suppressionKey(last.provider, address);
    const reason = await this.#call('sent', [address, JSON.stringify(last), key, String(SEND_LOG_MAX)]);
    return reason === null ? undefined : text(reason);
  }

  async last(address: string): Promise<LastSend | undefined> {
    const raw = await this.#call('lastsend', [address]);
    return raw === null ? undefined : (JSON.parse(text(raw)) as LastSend);
  }

  async suppress(provider: ProviderFormat, address: string, reason: string): Promise<void> {
    await this.#call('suppress', [suppressionKey(provider, address), reason, String(SEND_LOG_MAX)]);
  }

  async pendingCount(): Promise<number> {
    return Number(text(await this.#call('pending')));
  }

  onDue(listener: (at: number) => void): () => void {
    this.#dueListeners.add(listener);
    return () => void this.#dueListeners.delete(listener);
  }

  onRemoved(listener: (id: string) => void): () => void {
    this.#removedListeners.add(listener);
    return () => void this.#removedListeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.#reconnectListeners.add(listener);
    return () => void this.#reconnectListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#unsubscribe.splice(0).map((stop) => stop().catch(() => {})));
  }

  // -------------------------------------------------------------------------

  #now(): number {
    return this.#options.clock.now();
  }

  #call(op: string, args: readonly (string | Buffer)[] = []): Promise<RedisReply> {
    return this.#connection.script(WEBHOOK_SCRIPT, [], [this.#prefix, op, String(this.#now()), this.#owner, ...args]);
  }

  /** A batch from the script's answer, from `at` on: the next due time, the pending count, then six fields per claim. */
  #batch(reply: readonly RedisReply[], at: number): ClaimBatch {
    const next = text(reply[at]);
    const claims: Claim[] = [];
    for (let i = at + 2; i + 5 < reply.length; i += 6) {
      const webhookId = text(reply[i]);
      const before = text(reply[i + 5]);
      const [since, until] = before.split(' ').map(Number);
      claims.push({
        webhookId,
        webhook: this.#index.get(webhookId) ?? decodeWebhook(text(reply[i + 1])),
        delivery: this.#delivery(webhookId, text(reply[i + 3])),
        token: text(reply[i + 4]),
        lost: before === '' ? undefined : { since: since!, until: until! },
      });
    }
    return { claims, nextDueAt: next === '' ? undefined : Number(next), pending: Math.max(0, Number(text(reply[at + 1]))) };
  }

  /**
   * A delivery from its record; a `message.received` event's payload reads
   * its message from the mail store when an attempt goes, and is `gone`
   * (MessageGoneError) once the mail is.
   */
  #delivery(webhookId: string, raw: string): Delivery {
    const record = JSON.parse(raw) as DeliveryRecord;
    const { ref, address } = record.event;
    const payload = async (): Promise<EventPayload> =>
      payloadOf(record.event, ref.kind === 'message' ? await this.#options.readSource(address, ref.messageId) : undefined);
    return fromDeliveryRecord(webhookId, record, eventOf(record.event, payload));
  }

  /** Reads one registration (or takes the one given) into memory. */
  async #learn(id: string, known?: Webhook): Promise<void> {
    let webhook = known;
    let order = Number.MAX_SAFE_INTEGER;
    const reply = (await this.#call('registrations', [id])) as RedisReply[];
    if (reply.length >= 3) {
      webhook ??= decodeWebhook(text(reply[1]));
      order = Number(text(reply[2]));
    } else if (!known) return; // removed again meanwhile
    this.#index.add(webhook!);
    this.#order.set(id, order);
  }

  #forget(id: string): Webhook | undefined {
    this.#order.delete(id);
    const known = this.#index.remove(id);
    if (known) for (const listener of [...this.#removedListeners]) this.#tell(() => listener(id));
    return known;
  }

  /** Every registration read again (at open, and after a break in which changes may have been missed). */
  async #reload(): Promise<void> {
    const reply = (await this.#call('registrations')) as RedisReply[];
    const seen = new Set<string>();
    for (let i = 0; i + 2 < reply.length; i += 3) {
      const id = text(reply[i]);
      seen.add(id);
      this.#order.set(id, Number(text(reply[i + 2])));
      if (!this.#index.get(id)) this.#index.add(decodeWebhook(text(reply[i + 1])));
    }
    for (const webhook of this.#index.list()) if (!seen.has(webhook.id)) this.#forget(webhook.id);
  }

  #tell(run: () => void): void {
    try {
      run();
    } catch (error) {
      this.#options.logger.error(`mailroom: a webhook store listener failed: ${String(error)}`);
    }
  }

  #apply(change: () => Promise<void>): void {
    this.#changes = this.#changes.then(change).catch((error: unknown) => {
      // Redis out of reach: the reload after the break catches up.
      if (!this.#closed) this.#options.logger.warn(`mailroom: could not read a webhook change from the store: ${String(error)}`);
    });
  }

  async #listen(): Promise<void> {
    const { subscriber } = this.#options;
    const changed = `${this.#prefix}:wh:changed`;
    const due = `${this.#prefix}:wh:due`;
    await subscriber.subscribe(changed, (message: string) => {
      const id = message.slice(1);
      if (message.startsWith('+')) this.#apply(() => (this.#index.get(id) ? Promise.resolve() : this.#learn(id)));
      else if (message.startsWith('-')) this.#apply(async () => void this.#forget(id));
    });
    await subscriber.subscribe(due, (message: string) => {
      const [time, origin] = message.split(' ');
      const at = Number(time);
      // This server's own announcements: it looks by itself after queueing, retrying or replaying.
      if (!Number.isFinite(at) || origin === this.#owner) return;
      for (const listener of [...this.#dueListeners]) this.#tell(() => listener(at));
    });
    // (skipped once the mail store has closed the connection: nothing is heard any more)
    this.#unsubscribe.push(
      async () => void (subscriber.isOpen && (await subscriber.unsubscribe(changed))),
      async () => void (subscriber.isOpen && (await subscriber.unsubscribe(due))),
    );
    const stop = this.#options.onReconnect(() => {
      this.#apply(() => this.#reload());
      for (const listener of [...this.#reconnectListeners]) this.#tell(listener);
    });
    this.#unsubscribe.push(async () => stop());
  }
}
