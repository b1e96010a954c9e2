// A round-robin TCP load balancer in front of several servers, as a
// staging setup would put one in front of mailroom replicas: each new
// connection goes to the next backend that accepts it (a dead one is skipped,
// as a health-checking balancer would). Real sockets end to end; a backend
// that dies takes its open connections with it, as it would behind any
// balancer.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface Balancer {
  readonly port: number;
  /** How many connections went to each backend port. */
  readonly routed: Map<number, number>;
  close(): Promise<void>;
}

export async function startBalancer(backends: readonly number[]): Promise<Balancer> {
  let next = 0;
  const routed = new Map<number, number>();
  const open = new Set<Socket>();
  const pick = (client: Socket, tried = 0) => {
    if (tried >= backends.length) return client.destroy();
    const port = backends[next++ % backends.length]!;
    const upstream = connect(port, '127.0.0.1');
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      routed.set(port, (routed.get(port) ?? 0) + 1);
      open.add(upstream);
      upstream.once('close', () => open.delete(upstream));
      client.pipe(upstream).pipe(client);
      upstream.on('error', () => client.destroy());
      upstream.once('close', () => client.destroy());
      client.on('error', () => upstream.destroy());
      client.once('close', () => upstream.destroy());
      client.resume();
    });
    upstream.once('error', () => {
      if (!connected) pick(client, tried + 1);
    });
  };
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    pick(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    routed,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
