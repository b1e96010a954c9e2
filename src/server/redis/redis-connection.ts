// One connection to the Redis a store lives in, through node-redis
// (@redis/client, the client Redis maintains; see the README for why).
//
// Commands are never queued while the connection is down
// (`disableOfflineQueue`), and each has a deadline: a request answers
// `503 unavailable` (store-unavailable.ts) at once instead of hanging, while
// the client reconnects on its own in the background, with backoff capped
// at one second. The first connection must succeed within `connectTimeoutMs`,
// so a wrong URL fails `mailroom serve` at start with a message naming it.
import { createHash } from 'node:crypto';
import { createClient, ErrorReply, RESP_TYPES, type RedisArgument } from '@redis/client';
import type { Logger } from '../base/log.js';
import { describeRedisUrl } from '../store/store-location.js';
import { storeUnavailable } from '../store/store-unavailable.js';

/** How long a command may go unanswered before it is answered as unavailable (tests shorten it). */
export const COMMAND_TIMEOUT_MS = 5_000;

/**
 * `sent`, or a rejection once it has gone unanswered for `ms`.
 * The deadline is a plain timer: node-redis's own (`timeout`, an
 * AbortSignal.timeout and its listener per command) cost 10 to 20 µs a
 * command, a tenth of what a mail costs the intake. A command already
 * written is answered by Redis all the same; its late reply is dropped.
 */
function withDeadline<T>(sent: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // unref: as node-redis's, the deadline alone keeps no process alive
    const timer = setTimeout(() => reject(new Error(`no reply within ${ms} ms`)), ms).unref();
    sent.then(
      (reply) => {
        clearTimeout(timer);
        resolve(reply);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
const AS_BUFFERS = { [RESP_TYPES.BLOB_STRING]: Buffer, [RESP_TYPES.SIMPLE_STRING]: Buffer } as const;
/** Replies that mean "Redis is there but cannot serve now": answered as unavailable, like a lost connection. */
const TRANSIENT_REPLY = /^(OOM|LOADING|BUSY|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN)\b/;

export type RedisReply = Buffer | number | null | RedisReply[];

function makeClient(url: string, connectTimeoutMs: number) {
  return createClient({
    url,
    disableOfflineQueue: true,
    // No deadline of node-redis's own on top of withDeadline's: since 6.x it
    // gives every command an AbortSignal.timeout(5000) by default, whose
    // timer fires five seconds later, made a DOMException, whether or not
    // the reply had long come (about 10 us a command here, bench/store.ts).
    commandOptions: { timeout: 0 },
    socket: { connectTimeout: Math.min(connectTimeoutMs, 2_000), reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1_000) },
  });
}

type Client = ReturnType<typeof makeClient>;

export class RedisConnection {
  readonly description: string;
  readonly #client: Client;
  readonly #shas = new Map<string, string>();
  readonly #commandTimeoutMs: number;
  #down = false;

  /** The last error while the first connection was being made (not yet an outage: nothing was served). */
  #startError: unknown;
  #started = false;

  // node-redis 6.3.1 delivers events only to listeners added before
  // connect() (one added after is never called), so every listener is here.
  private constructor(client: Client, description: string, logger: Logger, commandTimeoutMs: number) {
    this.#client = client;
    this.#commandTimeoutMs = commandTimeoutMs;
    this.description = description;
    // Reported once per outage, not once per reconnect attempt.
    const lost = (reason: string) => {
      if (this.#down) return;
      this.#down = true;
      logger.error(`mailroom: lost the message store (${description}): ${reason}; reconnecting`);
    };
    client.on('error', (error: Error) => {
      if (this.#started) lost(error.message);
      else this.#startError = error;
    });
    client.on('reconnecting', () => {
      if (this.#started) lost('the connection closed');
    });
    client.on('ready', () => {
      if (!this.#down) return;
      this.#down = false;
      logger.warn(`mailroom: the message store (${description}) is back`);
    });
  }

  static async open(url: string, logger: Logger, connectTimeoutMs = 5_000, commandTimeoutMs = COMMAND_TIMEOUT_MS): Promise<RedisConnection> {
    const description = describeRedisUrl(url);
    const client = makeClient(url, connectTimeoutMs);
    const connection = new RedisConnection(client, description, logger, commandTimeoutMs);
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.connect(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no connection within ${connectTimeoutMs} ms`)), connectTimeoutMs);
        }),
      ]);
    } catch (error) {
      client.destroy();
      const last = connection.#startError;
      const reason = last instanceof Error ? `${(error as Error).message}; last error: ${last.message}` : (error as Error).message;
      throw new Error(`mailroom: cannot reach the message store (${description}): ${reason}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    connection.#started = true;
    return connection;
  }

  /** A second connection to the same Redis, for a subscription (a subscribed connection takes no other commands). */
  /** `onReconnect` is called each time the subscription's connection is ready again after a break. */
  async subscriber(onReconnect: () => void): Promise<Client> {
    const sub = this.#client.duplicate();
    let connected = false;
    sub.on('error', () => {}); // the main connection reports the outage; this one reconnects on its own
    sub.on('ready', () => {
      if (connected) onReconnect();
    });
    await sub.connect();
    connected = true;
    return sub;
  }

  /** True while commands can be sent. */
  get isReady(): boolean {
    return this.#client.isReady;
  }

  /** Runs one command; bulk replies come back as Buffers. */
  async run(args: readonly RedisArgument[]): Promise<RedisReply> {
    try {
      return await withDeadline(this.#client.sendCommand<RedisReply>(args, { typeMapping: AS_BUFFERS }), this.#commandTimeoutMs);
    } catch (error) {
      throw this.#failure(error);
    }
  }

  /** Runs a Lua script by its SHA1, loading it first when Redis does not know it (a restarted Redis forgets). */
  async script(source: string, keys: readonly RedisArgument[], args: readonly RedisArgument[]): Promise<RedisReply> {
    let sha = this.#shas.get(source);
    if (!sha) this.#shas.set(source, (sha = createHash('sha1').update(source).digest('hex')));
    const call = [sha, String(keys.length), ...keys, ...args];
    try {
      return await withDeadline(this.#client.sendCommand<RedisReply>(['EVALSHA', ...call], { typeMapping: AS_BUFFERS }), this.#commandTimeoutMs);
    } catch (error) {
      if (!(error instanceof ErrorReply && error.message.startsWith('NOSCRIPT'))) throw this.#failure(error);
    }
    return this.run(['EVAL', source, ...call.slice(1)]);
  }

  async close(): Promise<void> {
    if (this.#client.isOpen) await this.#client.close().catch(() => this.#client.destroy());
    else this.#client.destroy();
  }

  #failure(error: unknown): unknown {
    // A reply Redis gave on purpose (a bug in a script) is not an outage: it stays a 500.
    if (error instanceof ErrorReply && !TRANSIENT_REPLY.test(error.message)) return error;
    return storeUnavailable(this.description, error);
  }
}
