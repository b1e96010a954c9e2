// A real redis-server (Debian's package; `npm test` installs it when missing,
// scripts/provisioning.ts) for the tests
// of the Redis store: on a free loopback port, with no persistence (`--save ''
// --appendonly no`) and its working directory in a temporary folder removed
// at stop, so a run leaves no files behind. Tests may stop it and start it
// again on the same port, as an outage would.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

export const REDIS_SERVER = process.env.MAILROOM_REDIS_SERVER ?? 'redis-server';

/** What to run when there is no redis-server: printed as is by `npm test`. */
export const INSTALL_REDIS_ADVICE: readonly string[] = Object.freeze([
  'Install it:',
  '  - Debian/Ubuntu: sudo apt-get install -y redis-server',
  '  - macOS: brew install redis',
  '  - or set MAILROOM_REDIS_SERVER=/path/to/redis-server',
]);

/**
 * The redis-server executable the tests start: `MAILROOM_REDIS_SERVER` (a
 * path, or a command on PATH) when set, else `redis-server` on PATH. Throws
 * an error that says what to run when there is none.
 */
export function findRedisServer(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const dirs = (env.PATH ?? '').split(':').filter(Boolean);
  const override = env.MAILROOM_REDIS_SERVER;
  if (override) {
    const found = executable(override, dirs);
    if (found) return found;
    throw new Error(
      [`MAILROOM_REDIS_SERVER is set to ${override}, but no such program is there. Point it at a redis-server or unset it.`, ...INSTALL_REDIS_ADVICE].join(
        '\n',
      ),
    );
  }
  const found = executable('redis-server', dirs);
  if (found) return found;
  throw new Error(
    [
      "No redis-server found for the Redis store's tests. Looked at:",
      '  - MAILROOM_REDIS_SERVER (not set)',
      '  - redis-server on PATH (missing)',
      ...INSTALL_REDIS_ADVICE,
    ].join('\n'),
  );
}

/** `command`'s path when it names an executable file: as a path when it has a slash, else in one of `dirs`. */
function executable(command: string, dirs: readonly string[]): string | undefined {
  const candidates = command.includes('/') ? [command] : dirs.map((dir) => `${dir}/${command}`);
  return candidates.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  });
}

export interface RedisServer {
  readonly port: number;
  /** The running process's id (undefined while stopped): a benchmark reads its CPU time. */
  readonly pid: number | undefined;
  /** `redis://127.0.0.1:<port>/0`, plus `?prefix=` when one is given. */
  url(prefix?: string): string;
  /** Stops the process (SIGKILL when `abruptly`: no goodbye to clients). The port stays this server's to start again. */
  stop(abruptly?: boolean): Promise<void>;
  /** Starts it again on the same port (empty: nothing was persisted). */
  start(): Promise<void>;
  readonly running: boolean;
  /** Stops it for good and removes its folder. */
  close(): Promise<void>;
  /** How many times Redis has run `command` (INFO commandstats), e.g. `evalsha`: a way to know a call has been made. */
  calls(command: string): Promise<number>;
  /** Writes a snapshot (SAVE) that the next `start()` loads: an outage that keeps the data, as a Redis with persistence would. */
  save(): Promise<void>;
}

/**
 * How redis-server is scheduled. `raised` (the tests' default): nice -10
 * where this process may raise a priority (root, as CI runs, or
 * CAP_SYS_NICE), else unchanged. Every Redis test waits on redis-server once
 * per command, one command after another; on a 2-core machine saturated by
 * the rest of `npm test` (and stress-ng in the flake runs) each of its
 * wake-ups waited for a core, so chains of a thousand commands took 10-40
 * times as long as alone: 1,000 RCPTs (one look-up each) 61.7 s against 1.5 s
 * alone, past the 60 s test timeout, and the store's model test 93 s, with
 * `stress-ng --cpu 12` beside them; at nice -10, 6.1 s and 12.5 s. It uses
 * little CPU, so raising it takes little from the rest. `normal` is for the
 * benchmarks, which compare stores as a user would run them.
 */
export type RedisPriority = 'raised' | 'normal';
const RAISED_NICE = -10;

function launch(port: number, dir: string, priority: RedisPriority): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`redis-server on port ${port} did not accept connections within 10 s; it said: ${output}`));
    }, 10_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${REDIS_SERVER} (install Debian's redis-server, or set MAILROOM_REDIS_SERVER): ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server on port ${port} exited with ${code} before it was ready: ${output}`));
    });
    child.stderr.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    // With --loglevel warning it prints nothing when ready: ask it.
    const probe = async () => {
      for (;;) {
        if (child.exitCode !== null) return;
        const ok = await new Promise<boolean>((done) => {
          const socket = connect(port, '127.0.0.1');
          socket.once('connect', () => socket.write('PING\r\n'));
          socket.once('data', (data) => {
            socket.destroy();
            done(data.toString().startsWith('+PONG'));
          });
          socket.once('error', () => done(false));
        });
        if (ok) {
          clearTimeout(timer);
          child.removeAllListeners('exit');
          if (priority === 'raised') raise(child);
          return resolve(child);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    void probe();
  });
}

/** Where the process may not raise a priority (not root, no CAP_SYS_NICE), redis-server runs at its own; the tests pass either way. */
function raise(child: ChildProcess): void {
  try {
    setPriority(child.pid!, RAISED_NICE);
  } catch {
    // EACCES or EPERM: unchanged
  }
}

export async function startRedisServer(options: { readonly priority?: RedisPriority } = {}): Promise<RedisServer> {
  const priority = options.priority ?? 'raised';
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-redis-'));
  let child: ChildProcess | undefined = await launch(port, dir, priority);
  const server: RedisServer = {
    port,
    url: (prefix) => `redis://127.0.0.1:${port}/0${prefix ? `?prefix=${prefix}` : ''}`,
    get pid() {
      return child?.pid;
    },
    get running() {
      return child !== undefined;
    },
    async stop(abruptly = false) {
      const current = child;
      child = undefined;
      if (!current || current.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        current.once('exit', () => resolve());
        current.kill(abruptly ? 'SIGKILL' : 'SIGTERM');
      });
    },
    async start() {
      if (child) return;
      child = await launch(port, dir, priority);
    },
    async calls(command) {
      const info = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let reply = '';
        socket.once('connect', () => socket.write('INFO commandstats\r\n'));
        socket.on('data', (chunk: Buffer) => {
          reply += chunk.toString();
          const header = /^\$(\d+)\r\n/.exec(reply);
          if (header && Buffer.byteLength(reply) >= header[0].length + Number(header[1]) + 2) {
            socket.destroy();
            resolve(reply);
          }
        });
        socket.once('error', reject);
      });
      return Number(new RegExp(`^cmdstat_${command.toLowerCase()}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
    },
    async save() {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => socket.write('SAVE\r\n'));
        socket.once('data', (data) => {
          socket.destroy();
          if (data.toString().startsWith('+OK')) resolve();
          else reject(new Error(`redis-server would not SAVE: ${data.toString()}`));
        });
        socket.once('error', reject);
      });
    },
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}
