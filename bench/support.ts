// What every bench section shares: child processes (the embedded server among
// them) on free loopback ports, a sender of real SMTP, and the numbers.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { request } from 'undici';
import { freePort } from '../test/support/free-port.js';
import type { SmtpAttempt } from '../src/server/base/smtp-attempts.js';

export { freePort };

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// --- processes ---------------------------------------------------------------

export interface Child {
  readonly child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s. */
  readonly stop: () => Promise<void>;
}

export function startChild(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Child {
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  return {
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** True once `GET {baseURL}/healthz` answers 200; false while nothing listens there yet. */
export async function answersHealthz(baseURL: string): Promise<boolean> {
  try {
    const response = await request(`${baseURL}/healthz`);
    await response.body.text();
    return response.statusCode === 200;
  } catch {
    return false;
  }
}

/** Polls `check` every 50 ms until it holds; fails with the child's output if it exits or time runs out. */
export async function waitFor(what: string, child: Child, check: () => Promise<boolean> | boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (child.child.exitCode !== null) throw new Error(`${what} exited early:\n${child.output()}`);
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms:\n${child.output()}`);
    await sleep(50);
  }
}

// --- the embedded server -------------------------------------------------------

export interface ServerProcess {
  readonly apiURL: string;
  readonly smtpPort: number;
  /** The server's request counts for one address (`/_mailroom/stats`, needs `--enable-faults`). */
  stats(address: string): Promise<{ list: number; wait?: number; message: number; rateLimited: number }>;
  readonly stop: () => Promise<void>;
  /** The process itself (its output, its pid for signals and /proc). */
  readonly child: Child;
}

export interface ServerProcessOptions {
  /** More `mailroom serve` arguments, e.g. `['--enable-faults']`. */
  readonly args?: readonly string[];
  /** Node's own flags, before the script, e.g. `['--expose-gc']`. */
  readonly nodeFlags?: readonly string[];
  /** The process's environment (default: this one's). */
  readonly env?: NodeJS.ProcessEnv;
}

/** `mailroom serve` (dist/cli/index.js) in its own process on free ports, once /healthz answers 200. */
export async function startServerProcess(options: ServerProcessOptions = {}): Promise<ServerProcess> {
  const [smtpPort, httpPort] = [await freePort(), await freePort()];
  const child = startChild(
    process.execPath,
    [...(options.nodeFlags ?? []), 'dist/cli/index.js', 'serve', '--smtp-port', String(smtpPort), '--http-port', String(httpPort), ...(options.args ?? [])],
    options.env,
  );
  const apiURL = `http://127.0.0.1:${httpPort}`;
  try {
    await waitFor('mailroom serve', child, () => answersHealthz(apiURL), 30_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    apiURL,
    smtpPort,
    async stats(address) {
      const response = await request(`${apiURL}/_mailroom/stats?${new URLSearchParams({ address })}`);
      return (await response.body.json()) as { list: number; wait?: number; message: number; rateLimited: number };
    },
    stop: () => child.stop(),
    child,
  };
}

/** Real SMTP to one port over a pool of 4 connections. */
export interface MailSender {
  /** Resolves at the SMTP 250 (the server answers it once the mail is visible), with performance.now() then. */
  readonly send: (to: string, subject: string) => Promise<number>;
  close(): void;
}

export function mailSender(smtpPort: number): MailSender {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 4 });
  return {
    async send(to, subject) {
      await transport.sendMail({ from: 'Bench <bench@acme.example>', to, subject, text: `${subject}. Your code is 123456.` });
      return performance.now();
    },
    close: () => transport.close(),
  };
}

// --- CPU (Linux, /proc) ---------------------------------------------------------

/**
 * Nanoseconds a process has run on a CPU, from /proc: its main thread alone
 * and all its threads together; undefined off Linux or once it has gone.
 * Load on a shared machine moves rates; it moves the CPU a message costs
 * much less.
 */
export function processCpuNs(pid: number | undefined): { readonly main: number; readonly all: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const of = (task: string) => Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    return { main: of(String(pid)), all: readdirSync(`/proc/${pid}/task`).reduce((sum, task) => sum + of(task), 0) };
  } catch {
    return undefined;
  }
}

/** The whole machine's CPU time so far, busy and in all (every core, in clock ticks), from /proc/stat; undefined off Linux. */
function machineCpuTicks(): { readonly busy: number; readonly total: number } | undefined {
  try {
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is inside user's already)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    return { busy, total: busy + idle! + iowait! };
  } catch {
    return undefined;
  }
}

/**
 * Runs `run` and reads what it cost: the share of all the machine's cores
 * busy meanwhile (0 to 1, NaN where /proc/stat cannot tell) and this
 * process's own CPU (all its threads), in microseconds.
 */
export async function withMachineCost<T>(run: () => Promise<T>): Promise<{ readonly result: T; readonly busy: number; readonly ownCpuUs: number }> {
  const [before, own] = [machineCpuTicks(), process.cpuUsage()];
  const result = await run();
  const [after, spent] = [machineCpuTicks(), process.cpuUsage(own)];
  const busy = !before || !after || after.total === before.total ? Number.NaN : (after.busy - before.busy) / (after.total - before.total);
  return { result, busy, ownCpuUs: spent.user + spent.system };
}

// --- numbers -----------------------------------------------------------------------

/** The nearest-rank percentile (NaN for no values); `values` need not be sorted. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** The lower median: the same value as `percentile(values, 50)`. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function verdict(ok: boolean): string {
  return ok ? 'MET' : 'MISSED';
}

/**
 * True when `count` samples can say something about the p-th percentile that
 * the maximum does not: at least one sample lies above it (p99 needs 100
 * samples, p90 ten). Below that, the nearest-rank "p99" is just the maximum.
 */
export function percentileSupported(p: number, count: number): boolean {
  return count >= Math.ceil(100 / (100 - p) - 1e-9);
}

/**
 * `p50 …, p90 …, max … (n=…)`, each value written by `format`. A percentile
 * the sample is too small for is left out (the maximum is always there).
 */
export function describe(values: readonly number[], format: (ms: number) => string, percentiles: readonly number[] = [50, 90, 99]): string {
  const max = values.reduce((a, b) => Math.max(a, b), -Infinity);
  const shown = percentiles.filter((p) => percentileSupported(p, values.length));
  return [...shown.map((p) => `p${p} ${format(percentile(values, p))}`), `max ${format(max)} (n=${values.length})`].join(', ');
}

/** The p-th percentile when the sample supports it, else the maximum, with the name of which it is. */
export function percentileOrMax(values: readonly number[], p: number): { readonly name: string; readonly value: number } {
  if (percentileSupported(p, values.length)) return { name: `p${p}`, value: percentile(values, p) };
  return { name: `max (n=${values.length}, too few for a p${p})`, value: values.reduce((a, b) => Math.max(a, b), -Infinity) };
}

/** Milliseconds with a fixed number of decimals: `formatMs(2)(1.5)` is `1.50 ms`. */
export function formatMs(decimals: number): (ms: number) => string {
  return (ms) => `${ms.toFixed(decimals)} ms`;
}

/** `1.500 s` */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** Seconds from one second up, milliseconds below: `1.500 s`, `12.3 ms`. */
export function formatDuration(ms: number): string {
  return ms >= 1000 ? formatSeconds(ms) : formatMs(1)(ms);
}

/** The SMTP intake's record of a mail it stored (what the webhook service hears), for benches that publish attempts without SMTP. */
export function acceptedAttempt(message: { readonly id: string; readonly mailbox: string }, at: number): SmtpAttempt {
  return {
    at,
    clientIp: '::ffff:127.0.0.1',
    from: 'a@example.com',
    to: message.mailbox,
    stage: 'data',
    code: 250,
    enhancedCode: '2.6.0',
    text: `Stored as ${message.id}`,
    outcome: 'accepted',
    messageId: message.id,
  };
}
