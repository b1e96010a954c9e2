// A real local HTTP receiver for webhook tests: node:http on a free port,
// every request recorded with its raw body and when it arrived, and
// answered as the test scripted (a status, a delay, a hang, a reset), or
// taken down and brought back up on the same port (connection refused).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { listenOnFreePort } from './free-port.js';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** performance.now() when the request's head arrived. */
  readonly at: number;
  readonly eventId: string;
  readonly attempt: number;
  /** The sender's port: which process sent it can be found from it (cli-replica.ts `processOwning`). */
  readonly remotePort: number;
}

export type Reply =
  { readonly status: number; readonly headers?: Record<string, string>; readonly delayMs?: number } | { readonly hang: true } | { readonly reset: true };

export class WebhookReceiver {
  readonly received: Received[] = [];
  /** Scripted replies, used one per request; `otherwise` after they run out. */
  readonly script: Reply[] = [];
  otherwise: Reply | ((request: Received) => Reply) = { status: 204 };
  #server: Server | undefined;
  #port = 0;
  readonly #sockets = new Set<Socket>();
  #waiters: { n: number; resolve: () => void }[] = [];

  get url(): string {
    return `http://127.0.0.1:${this.#port}/hooks/mail`;
  }

  get port(): number {
    return this.#port;
  }

  async up(): Promise<this> {
    const server = createServer((req, res) => {
      const at = performance.now();
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const received: Received = {
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at,
          eventId: String(req.headers['mailroom-event-id'] ?? ''),
          attempt: Number(req.headers['mailroom-attempt'] ?? 0),
          remotePort: req.socket.remotePort ?? 0,
        };
        this.received.push(received);
        const reply = this.script.shift() ?? (typeof this.otherwise === 'function' ? this.otherwise(received) : this.otherwise);
        this.#waiters = this.#waiters.filter((w) => (this.received.length >= w.n ? (w.resolve(), false) : true));
        if ('hang' in reply) return;
        if ('reset' in reply) return void req.socket.destroy();
        const send = () => res.writeHead(reply.status, reply.headers).end('ok');
        if (reply.delayMs) setTimeout(send, reply.delayMs);
        else send();
      });
    });
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    // The first time on a port from free-port.ts, not listen(0): while
    // `down()`, a listen(0) elsewhere could be given the freed port, and the
    // attempts meant to be refused would reach that server instead (the fault
    // proxy's cut did exactly that, flake run s54). free-port.ts's claim keeps
    // other processes' picks off it too.
    const listen = (port: number) =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    if (this.#port) await listen(this.#port);
    else await listenOnFreePort(listen);
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
    return this;
  }

  /** Stops listening and drops every connection: the next attempt is refused. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `n` requests in all have arrived. */
  waitFor(n: number): Promise<void> {
    if (this.received.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ n, resolve }));
  }
}

const open: WebhookReceiver[] = [];

/** A receiver on a free port; `closeReceivers()` in an afterEach takes them all down. */
export async function startReceiver(): Promise<WebhookReceiver> {
  const receiver = await new WebhookReceiver().up();
  open.push(receiver);
  return receiver;
}

export async function closeReceivers(): Promise<void> {
  await Promise.all(open.splice(0).map((receiver) => receiver.down()));
}
