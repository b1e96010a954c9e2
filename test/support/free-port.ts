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
// collide, which the probe and the random draw make rare, and a port is
// never given twice by one process.
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
    if (await listensOn(port)) return port;
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
