// A loopback port free at the time of asking, for the tests and benchmarks
// that start a process which cannot take port 0 and report back (a
// redis-server, a CLI whose port is given in advance). The OS picks it; the
// probe closes before the caller binds, so another process could take it
// in between: rare on loopback, and the caller's bind then fails loudly.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
