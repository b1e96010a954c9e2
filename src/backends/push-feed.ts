// A catcher's push stream (maildev's socket.io events, Mailpit's
// /api/events): one WebSocket per backend, opened on the first wait that
// wants it, through undici's WebSocket client. It only says "mail arrived
// somewhere": the wait that hears it lists its own address at once
// (push-wait.ts), so the stream's format carries no address rules.
//
// When the stream cannot be opened, or drops, the wait is told with a
// network error and the wait loop polls for the rest of that wait at the
// floor of rule 4 (wait/long-poll-strategy.ts); the next wait tries the
// stream again, unless it failed within the last few seconds.
import { WebSocket } from 'undici';
import { MailroomNetworkError } from '../client/errors.js';

/** How a stream's frames read: the handshake, "new mail", and frames to answer. */
export interface FeedProtocol {
  /** Ready as soon as the socket opens (Mailpit), or after a handshake frame (socket.io). */
  readonly readyOnOpen: boolean;
  /**
   * Reads one text frame; may answer it with `send` (a handshake, a pong).
   * `'ready'`: the stream now delivers events; `'mail'`: mail arrived;
   * `'closed'`: the server ended the session.
   */
  onFrame(frame: string, send: (text: string) => void): 'ready' | 'mail' | 'closed' | undefined;
}

/** After a failure, waits do not try the stream again for this long: they poll. */
const RETRY_AFTER_FAILURE_MS = 5_000;
/**
 * The stream stays open this long after the last wait on it ended, for the
 * test's next wait; then it closes, so an idle process can exit.
 */
export const IDLE_CLOSE_MS = 2_000;

export class PushFeed {
  readonly #url: string;
  readonly #headers: () => Record<string, string>;
  readonly #protocol: FeedProtocol;
  #socket: WebSocket | undefined;
  #ready: Promise<void> | undefined;
  #failedAt = Number.NEGATIVE_INFINITY;
  #lastFailure: Error | undefined;
  /** Bumped on every "mail arrived"; subscribers compare. */
  #mailSeen = 0;
  readonly #waiters = new Set<() => void>();
  #holds = 0;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(url: string, headers: () => Record<string, string>, protocol: FeedProtocol) {
    this.#url = url;
    this.#headers = headers;
    this.#protocol = protocol;
  }

  /** Whether the stream is open and delivering now. */
  get open(): boolean {
    return this.#socket !== undefined && this.#socket.readyState === WebSocket.OPEN && this.#ready !== undefined;
  }

  /** Opens the stream if need be; rejects with a network error when it cannot. */
  async ready(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (!this.#ready) {
      if (performance.now() - this.#failedAt < RETRY_AFTER_FAILURE_MS) {
        throw this.#failure(
          `the push stream failed ${Math.round(performance.now() - this.#failedAt)} ms ago (${this.#lastFailure?.message ?? 'closed'}); polling until it is tried again`,
        );
      }
      this.#ready = this.#connect(timeoutMs);
      this.#ready.catch(() => {});
    }
    const ready = this.#ready;
    if (!signal) return ready;
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      signal.addEventListener('abort', onAbort, { once: true });
      ready.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  /** A wait starts using the stream; call the function returned when it ends. */
  use(): () => void {
    this.#holds++;
    clearTimeout(this.#idleTimer);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds > 0) return;
      this.#idleTimer = setTimeout(() => {
        if (this.#holds === 0) this.close();
      }, IDLE_CLOSE_MS);
      this.#idleTimer.unref();
    };
  }

  /** A mark in the stream: `waitForMail(mark, …)` resolves once mail arrived after it. */
  mark(): number {
    return this.#mailSeen;
  }

  /**
   * Resolves true once mail arrived after `mark`, false after `ms`; rejects
   * with a network error when the stream drops meanwhile.
   */
  waitForMail(mark: number, ms: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#mailSeen !== mark) return Promise.resolve(true);
    if (!this.open) return Promise.reject(this.#failure('the push stream is not open'));
    return new Promise<boolean>((resolve, reject) => {
      const done = (outcome: boolean | Error) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', onAbort);
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const wake = () => {
        if (this.#mailSeen !== mark) done(true);
        else if (!this.open) done(this.#failure('the push stream closed'));
      };
      const onAbort = () => done(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      const timer = setTimeout(() => done(false), Math.max(0, ms));
      this.#waiters.add(wake);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Closes the stream; the next wait opens it again. */
  close(): void {
    const socket = this.#socket;
    this.#socket = undefined;
    this.#ready = undefined;
    socket?.close();
    this.#wakeAll();
  }

  #connect(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (why: string) => {
        // A socket closed on purpose (close()) or replaced is no failure.
        if (settled && this.#socket !== socket) return;
        this.#failedAt = performance.now();
        this.#lastFailure = new Error(why);
        if (this.#socket === socket) {
          this.#socket = undefined;
          this.#ready = undefined;
        }
        try {
          socket.close();
        } catch {
          // already closing
        }
        this.#wakeAll();
        if (!settled) {
          settled = true;
          clearTimeout(timer);
          reject(this.#failure(why));
        }
      };
      const succeed = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => fail(`no handshake within ${timeoutMs} ms`), timeoutMs);
      const socket = new WebSocket(this.#url, { headers: this.#headers() });
      this.#socket = socket;
      socket.addEventListener('open', () => {
        if (this.#protocol.readyOnOpen) succeed();
      });
      socket.addEventListener('message', (event) => {
        if (typeof event.data !== 'string') return;
        const said = this.#protocol.onFrame(event.data, (text) => socket.send(text));
        if (said === 'ready') succeed();
        else if (said === 'mail') {
          this.#mailSeen++;
          this.#wakeAll();
        } else if (said === 'closed') fail('the server ended the session');
      });
      socket.addEventListener('error', (event) => {
        const error = (event as unknown as { error?: unknown }).error;
        fail(error instanceof Error ? error.message : 'the connection failed');
      });
      socket.addEventListener('close', (event) => fail(`closed (${event.code}${event.reason ? ` ${event.reason}` : ''})`));
    });
  }

  #wakeAll(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  #failure(detail: string): MailroomNetworkError {
    return new MailroomNetworkError({ method: 'GET', url: this.#url, slug: 'network_error', detail });
  }
}
