// `mailroom serve` replicas as real processes (the built CLI) for tests of
// several servers on one store: started on free ports, their output kept,
// killed with SIGKILL as a lost node is. `processOwning` tells which of them
// holds one end of a TCP connection (Linux /proc), so a test can say which
// replica made the request a receiver is holding.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));

export interface Replica {
  readonly smtpPort: number;
  readonly apiURL: string;
  readonly child: ChildProcess;
  readonly pid: number;
  output(): string;
  /** SIGKILL: no goodbye, as a lost node. */
  kill(): Promise<void>;
}

const started: Replica[] = [];

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`npm run build\` first (npm test does)`);
}

/** Starts `mailroom serve --store <store>` on free ports; `killReplicas()` in an afterEach ends them all. */
export async function startReplica(store: string, ...args: string[]): Promise<Replica> {
  const child = spawn(process.execPath, [BIN, 'serve', '--smtp-port', '0', '--http-port', '0', '--store', store, ...args], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  const began = Date.now();
  // A hang guard, not a speed claim: at load 19-43 a start took over 15 s.
  const deadline = began + 45_000;
  for (;;) {
    const smtp = /SMTP listening on [^:]+:(\d+)/.exec(output);
    const http = /HTTP API listening on (http:\/\/\S+)\/api\/v1/.exec(output);
    if (smtp && http) {
      const replica = { smtpPort: Number(smtp[1]), apiURL: http[1]!, child, pid: child.pid!, output: () => output, kill };
      started.push(replica);
      return replica;
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      // Once seen under load with no output at all: say how long it had and how it ended.
      const ended = child.exitCode !== null ? `exited with ${child.exitCode}` : child.signalCode ? `killed by ${child.signalCode}` : 'still running';
      await kill();
      throw new Error(`replica not ready after ${Date.now() - began} ms (${ended}; pid ${child.pid ?? 'none'}): ${output || '(no output)'}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function killReplicas(): Promise<void> {
  await Promise.all(started.splice(0).map((replica) => replica.kill()));
}

/**
 * The socket inodes of the client ends of loopback TCP connections from
 * `clientPort` to `serverPort` (/proc/net/tcp, tcp6). Both ports are needed:
 * Linux hands out the same ephemeral port to connections bound for
 * different servers, so a match on the client port alone found another
 * process's connection (to redis, say) under load, and the sender was
 * "nobody" (a flake run of stop 34).
 */
function inodesOfConnection(clientPort: number, serverPort: number): string[] {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  const inodes: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // fields: sl, local_address, rem_address, st, queues, tr, retrnsmt, uid, timeout, inode
      if (fields.length > 9 && fields[1]!.endsWith(`:${hex(clientPort)}`) && fields[2]!.endsWith(`:${hex(serverPort)}`) && fields[3] === '01') {
        inodes.push(fields[9]!);
      }
    }
  }
  return inodes;
}

/**
 * Which of `pids` holds the client end of a connection that reached a
 * server here on `serverPort` from `clientPort` (the request's
 * `req.socket.remotePort`): the process whose open files include that
 * socket. Linux only; undefined when none does.
 */
export function processOwning(clientPort: number, serverPort: number, pids: readonly number[]): number | undefined {
  const sockets = new Set(inodesOfConnection(clientPort, serverPort).map((inode) => `socket:[${inode}]`));
  if (sockets.size === 0) return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (sockets.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
