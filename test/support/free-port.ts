// A loopback port free at the time of asking, for the tests, benchmarks and
// the pack check that start a process which cannot take port 0 and report
// back (a redis-server, a CLI or demo app whose port is given in advance).
//
// The port is drawn below the OS's ephemeral range. A port the OS handed
// out for `listen(0)` and that was closed again can be handed to the next
// `listen(0)` or outgoing connection of any process, and on a busy machine
// one was: the pack check's demo app lost its port to the Vitest suite
// running beside it (EADDRINUSE, stress-ng run s11). Below the range the OS
// never hands a port out by itself, so only another explicit pick can
// collide: a port is never given twice while the process it was given to
// lives, in that process or another (a claim per port, below).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Where the ephemeral range starts (Linux's /proc; 32768, its default, elsewhere). */
function ephemeralStart(): number {
  try {
    const [first] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (first !== undefined && Number.isInteger(first) && first > 12_000) return first;
  } catch {
    // Not Linux: its default range starts at 32768 too.
  }
  return 32_768;
}

const LAST = ephemeralStart() - 1;
const FIRST = LAST - 10_000;
const given = new Set<number>();

/**
 * Claims on ports, so that a port given to one process is never given to
 * another while the first lives. A port a test closes on purpose (a webhook
 * receiver taken down so that attempts are refused, then brought up again)
 * is free for the kernel, and the probe alone would hand it to the next pick
 * of any process running beside (four fault-matrix files, Vitest's workers,
 * the pack check): attempts meant to be refused would reach that process's
 * server instead. The fault proxy's cut met exactly that (a cut-off client
 * found another file's server quiet).
 *
 * A claim is a listening socket in Linux's abstract namespace, named after
 * the port: the kernel refuses a second one with EADDRINUSE, and frees it
 * when its process ends, however it ends (Vitest stops its workers without
 * an exit event), so no claim outlives its process. Elsewhere there are no
 * claims, only the probe.
 */
const CLAIMS = process.platform === 'linux';

/** Claims `port` for this process; false when a live process (this one or another) holds it. Exported for its test. */
export function claimPort(port: number): Promise<boolean> {
  if (!CLAIMS) return Promise.resolve(true);
  return new Promise((resolve, reject) => {
    const claim = createServer();
    claim.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    claim.listen({ path: `\0mailroom-port-${port}` }, () => {
      // Held for the process's life, without keeping it alive.
      claim.unref();
      resolve(true);
    });
  });
}

function listensOn(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = FIRST + Math.floor(Math.random() * (LAST - FIRST + 1));
    if (given.has(port)) continue;
    given.add(port);
    if ((await claimPort(port)) && (await listensOn(port))) return port;
  }
  throw new Error(`freePort: no free loopback port found in ${FIRST}-${LAST} after 200 tries`);
}

/**
 * Calls `listen(port)` with a port from `freePort()`, and with another when
 * that one was taken between the probe and the listen (another process's
 * pick: EADDRINUSE). Answers the port it listens on.
 */
export async function listenOnFreePort(listen: (port: number) => Promise<void>): Promise<number> {
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    try {
      await listen(port);
      return port;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 20) throw error;
    }
  }
}
