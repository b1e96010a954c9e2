// A TCP fault proxy for the fault matrix: real sockets between the client and
// the embedded server's HTTP port, breaking chosen requests the ways a
// network does. The server's own fault switch (src/server/http/test-hooks/faults.ts)
// breaks answers from inside; this breaks the connection around them.
//
// It reads just enough HTTP/1.1 to tell requests apart: each request head
// (the client sends no bodies), and each response's `content-length` so it
// knows where one answer ends on a kept-alive connection. That is what lets
// a fault hit "the next list call" rather than "whatever this socket carries".
import { createServer, connect, type Server, type Socket } from 'node:net';
import { API_BASE, HEALTH_PATH, WAIT_PATH } from '../../src/contract/routes.js';
import { listenOnFreePort } from '../support/free-port.js';

/** Which requests a rule matches: `check` is a list call or a long-poll, `api` anything but /healthz. */
export type ProxyRoute = 'list' | 'wait' | 'check' | 'message' | 'deleteMailbox' | 'api' | 'any';

export type ProxyFault =
  /** Close the connection (FIN) once the request is read, without passing it on: the server never sees it. */
  | { readonly kind: 'drop' }
  /** Pass the request on, then reset the client's connection (RST) at once: the server does the work, the client gets no answer. */
  | { readonly kind: 'reset-after-request' }
  /**
   * Pass the whole answer back, then reset the connection (RST): the next
   * request on it finds it dead. libuv reports an RST that arrives together
   * with unread bytes as a plain end (a partial read plus POLLHUP is taken
   * for EOF without reading again), so a peer in this process should read the
   * answer first: `read` settles when it has (the reset waits for it); without
   * it, the reset goes on the next turn of the loop, which a client in
   * this process usually, not always, reads before.
   */
  | { readonly kind: 'reset-after-response'; readonly read?: Promise<unknown> }
  /** Read the request and never answer (until the client gives up). */
  | { readonly kind: 'stall' }
  /** Pass the answer back `bytes` at a time, one slice every `everyMs`. */
  | { readonly kind: 'slow'; readonly bytes: number; readonly everyMs: number };

export interface ProxyRule {
  readonly route: ProxyRoute;
  /** How many matching requests get it. */
  readonly times: number;
  readonly fault: ProxyFault;
}

export interface ProxyCounts {
  /** Client connections accepted (dropped ones included). */
  connections: number;
  /** Connections closed at once on accept (`dropConnections`). */
  droppedConnections: number;
  /** Times the server was cut off (`cut()`). */
  cuts: number;
  /** Connections reset on accept while cut off: they carry no request. */
  cutConnections: number;
  /** Requests read from clients. */
  requests: number;
  /** Requests that got a rule's fault. */
  faulted: number;
  byRoute: Record<'health' | 'list' | 'wait' | 'message' | 'deleteMessage' | 'deleteMailbox' | 'other', number>;
}

type RequestRoute = keyof ProxyCounts['byRoute'];

interface ArmedRule {
  readonly route: ProxyRoute;
  remaining: number;
  readonly fault: ProxyFault;
}

const HEAD_END = Buffer.from('\r\n\r\n');
/** A request head larger than this is not from mailroom's client: passed on untouched. */
const MAX_HEAD = 64 * 1024;

function routeOf(method: string, path: string): RequestRoute {
  if (path === HEALTH_PATH) return 'health';
  if (path === WAIT_PATH) return 'wait';
  if (path === `${API_BASE}/mailbox`) return method === 'DELETE' ? 'deleteMailbox' : 'list';
  if (path.startsWith(`${API_BASE}/message/`)) return method === 'DELETE' ? 'deleteMessage' : 'message';
  return 'other';
}

function matches(rule: ProxyRoute, route: RequestRoute): boolean {
  switch (rule) {
    case 'any':
      return true;
    case 'api':
      return route !== 'health' && route !== 'other';
    case 'check':
      return route === 'list' || route === 'wait';
    case 'message':
      return route === 'message';
    default:
      return rule === route;
  }
}

export class FaultProxy {
  readonly counts: ProxyCounts = {
    connections: 0,
    droppedConnections: 0,
    cuts: 0,
    cutConnections: 0,
    requests: 0,
    faulted: 0,
    byRoute: { health: 0, list: 0, wait: 0, message: 0, deleteMessage: 0, deleteMailbox: 0, other: 0 },
  };
  readonly #upstreamPort: number;
  readonly #host: string;
  readonly #server: Server;
  #port = 0;
  #rules: ArmedRule[] = [];
  #dropConnections = 0;
  #cut = false;
  readonly #sockets = new Set<Socket>();
  readonly #timers = new Set<NodeJS.Timeout>();

  private constructor(upstreamPort: number, host: string) {
    this.#upstreamPort = upstreamPort;
    this.#host = host;
    this.#server = createServer((client) => this.#accept(client));
  }

  /**
   * A proxy on a free loopback port in front of `upstreamPort`: one below the
   * ephemeral range (free-port.ts), not `listen(0)`, which the kernel hands
   * out again as soon as it is closed.
   */
  static async start(upstreamPort: number, host = '127.0.0.1'): Promise<FaultProxy> {
    const proxy = new FaultProxy(upstreamPort, host);
    await listenOnFreePort((port) => proxy.#listen(port));
    return proxy;
  }

  get port(): number {
    return this.#port;
  }

  /** The proxy as an API URL for the client. */
  get apiURL(): string {
    return `http://${this.#host}:${this.#port}`;
  }

  /** Arms a fault for the next `times` requests on `route`; rules are taken in the order they were armed. */
  arm(rule: ProxyRule): void {
    if (!Number.isInteger(rule.times) || rule.times < 1) throw new TypeError(`Expected \`times\` to be a positive integer, got ${String(rule.times)}`);
    this.#rules.push({ route: rule.route, remaining: rule.times, fault: rule.fault });
  }

  /**
   * Closes the next `count` connections as soon as they are accepted, and
   * closes idle client connections now, so the client's next request has to
   * open one: a per-connection drop that bites whatever the keep-alive pool held.
   */
  dropConnections(count: number): void {
    this.#dropConnections += count;
    for (const socket of this.#sockets) if (socket.readableLength === 0 && (socket as TaggedSocket).idle) socket.destroy();
  }

  /** Disarms every rule and connection drop. */
  clear(): void {
    this.#rules = [];
    this.#dropConnections = 0;
  }

  /**
   * Cuts the server off entirely: every open connection destroyed, and every
   * new one reset as soon as it is accepted, so no request gets through.
   * The proxy keeps listening, so the port stays its own. A cut that closed
   * the listener freed the port for any other process's pick while cut, and
   * one took it: four fault-matrix files run side by side, each drawing its
   * proxies' ports, and a cut-off client reached another file's server
   * through its proxy there and found the mailbox quiet ("cut the server
   * off for good × polling × expectNoMail" came to "quiet" with 3 checks
   * answered and 0 requests through its own proxy; before free-port.ts, the
   * same with `listen(0)`, flake run s54).
   */
  cut(): void {
    this.counts.cuts++;
    this.#cut = true;
    this.#destroyAll();
  }

  /** Lets connections through again after `cut()`. */
  restore(): void {
    this.#cut = false;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#destroyAll();
    await closed;
  }

  #destroyAll(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  #listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, this.#host, () => {
        this.#server.off('error', reject);
        this.#port = (this.#server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    // A reset or a destroyed peer is part of the job, not a crash.
    socket.on('error', () => {});
  }

  #take(route: RequestRoute): ProxyFault | undefined {
    const index = this.#rules.findIndex((r) => matches(r.route, route));
    if (index === -1) return undefined;
    const rule = this.#rules[index]!;
    if (--rule.remaining === 0) this.#rules.splice(index, 1);
    return rule.fault;
  }

  #later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
  }

  #accept(client: TaggedSocket): void {
    this.#track(client);
    this.counts.connections++;
    if (this.#cut) {
      this.counts.cutConnections++;
      client.resetAndDestroy();
      return;
    }
    if (this.#dropConnections > 0) {
      this.#dropConnections--;
      this.counts.droppedConnections++;
      client.destroy();
      return;
    }
    client.idle = true;
    let upstream: Socket | undefined;
    let pending = Buffer.alloc(0);
    /** The fault of the request whose answer is flowing back now. */
    let answering: { fault: ProxyFault | undefined; head: Buffer; bodyLeft: number | undefined } | undefined;
    let paused = false;
    let resetting = false;

    const upstreamSocket = (): Socket => {
      if (upstream && !upstream.destroyed) return upstream;
      const socket = connect(this.#upstreamPort, this.#host);
      this.#track(socket);
      socket.on('data', (chunk: Buffer) => onAnswer(chunk));
      socket.once('close', () => {
        // An end() now would turn a reset on its way into a FIN.
        if (!client.destroyed && !resetting) client.end();
      });
      upstream = socket;
      return socket;
    };

    const onAnswer = (chunk: Buffer): void => {
      if (!answering) return void client.write(chunk);
      let rest = chunk;
      if (answering.bodyLeft === undefined) {
        answering.head = Buffer.concat([answering.head, rest]);
        const end = answering.head.indexOf(HEAD_END);
        if (end === -1) return;
        const head = answering.head.subarray(0, end).toString('latin1');
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        // Without a length the answer ends with the connection.
        answering.bodyLeft = length ? Number(length[1]) : Number.POSITIVE_INFINITY;
        rest = answering.head;
        answering.bodyLeft += end + HEAD_END.length;
      }
      answering.bodyLeft -= rest.length;
      const done = answering.bodyLeft <= 0;
      const fault = answering.fault;
      if (done) answering = undefined;
      deliver(rest, fault, done);
    };

    /** Writes an answer's bytes back to the client as its fault says. */
    const deliver = (bytes: Buffer, fault: ProxyFault | undefined, done: boolean): void => {
      if (fault?.kind === 'reset-after-request') {
        if (done) upstream?.destroy();
        return;
      }
      if (fault?.kind === 'slow') {
        upstream?.pause();
        paused = true;
        const drip = (offset: number): void => {
          if (client.destroyed) return;
          client.write(bytes.subarray(offset, offset + fault.bytes));
          if (offset + fault.bytes < bytes.length) return this.#later(fault.everyMs, () => drip(offset + fault.bytes));
          paused = false;
          upstream?.resume();
          if (done) answered();
        };
        drip(0);
        return;
      }
      if (fault?.kind === 'reset-after-response' && done) {
        // On a timer, not in the write's callback: from there the RST leaves
        // before a client in this process has read the answer, and libuv
        // shows it that client as a plain end (see `read`). The client's
        // 'close' handler then drops the upstream connection.
        resetting = true;
        const read = fault.read;
        client.write(bytes, () => (read ? void read.then(() => client.resetAndDestroy()) : this.#later(0, () => client.resetAndDestroy())));
        return;
      }
      client.write(bytes);
      if (done) answered();
    };

    const answered = (): void => {
      client.idle = true;
      if (!paused) onRequest(Buffer.alloc(0));
    };

    const onRequest = (chunk: Buffer): void => {
      pending = Buffer.concat([pending, chunk]);
      if (answering) return; // HTTP/1.1 without pipelining: the next request waits for this answer
      const end = pending.indexOf(HEAD_END);
      if (end === -1) {
        if (pending.length > MAX_HEAD) {
          upstreamSocket().write(pending);
          pending = Buffer.alloc(0);
        }
        return;
      }
      const head = pending.subarray(0, end + HEAD_END.length);
      pending = pending.subarray(end + HEAD_END.length);
      client.idle = false;
      const [method = 'GET', target = '/'] = head.subarray(0, head.indexOf('\r\n')).toString('latin1').split(' ');
      const route = routeOf(method, target.split('?')[0]!);
      this.counts.requests++;
      this.counts.byRoute[route]++;
      const fault = this.#take(route);
      if (fault) this.counts.faulted++;
      switch (fault?.kind) {
        case 'drop':
          client.end();
          upstream?.destroy();
          return;
        case 'stall':
          // Read, never answered: the client's own timeout ends it.
          answering = { fault, head: Buffer.alloc(0), bodyLeft: undefined };
          return;
        case 'reset-after-request':
          // The server gets the request and answers into the void; the
          // upstream connection lives until then (see the 'close' handler).
          answering = { fault, head: Buffer.alloc(0), bodyLeft: undefined };
          upstreamSocket().write(head);
          client.resetAndDestroy();
          return;
        default:
          answering = { fault, head: Buffer.alloc(0), bodyLeft: undefined };
          upstreamSocket().write(head);
      }
    };

    client.on('data', (chunk: Buffer) => onRequest(chunk));
    client.once('close', () => {
      if (answering?.fault?.kind !== 'reset-after-request') upstream?.destroy();
    });
  }
}

interface TaggedSocket extends Socket {
  /** True between answers: nothing is in flight on it. */
  idle?: boolean;
}
