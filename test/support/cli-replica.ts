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

/** The socket inode of the loopback TCP connection whose local port is `port` (/proc/net/tcp, tcp6). */
function inodeOfLocalPort(port: number): string | undefined {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
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
      if (fields.length > 9 && fields[1]!.endsWith(`:${hex}`) && fields[3] === '01') return fields[9];
    }
  }
  return undefined;
}

/**
 * Which of `pids` holds the client end of a connection that reached a
 * server here from `remotePort` (the request's `req.socket.remotePort`):
 * the process whose open files include that socket. Linux only; undefined
 * when none does.
 */
export function processOwning(remotePort: number, pids: readonly number[]): number | undefined {
  const inode = inodeOfLocalPort(remotePort);
  if (!inode) return undefined;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
