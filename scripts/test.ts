// `npm test`: the full gate CI runs (.ci/run). Runs the stages below, each
// one when the stages it needs have passed, side by side where the `after`
// lists allow, and prints at the end how long each stage took and the
// slowest test files (Vitest's and Playwright's reporters record them, see
// test/support/times.ts). Exits non-zero when any stage failed or could not
// run. One stage's output streams as it comes (`live`); the others' are held
// and printed whole when they end, under a line naming the stage, so two
// stages' lines never interleave.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TIMES_ENV, type FileTime } from '../test/support/times.js';

interface Stage {
  readonly name: string;
  readonly command: readonly string[];
  /** Stages that must pass first. */
  readonly after: readonly string[];
  readonly live?: boolean;
}

const VITEST_TIMES = ['--reporter=default', '--reporter=./test/support/vitest-times-reporter.ts'];

/**
 * The machine CI runs on has two cores, and most of the suite waits on
 * sockets and timers, so the stages that only need the build run side by
 * side: the checks that read the code, the Vitest suite, the pack check and
 * Playwright (the pack check's own Playwright uses free ports, so the two
 * need not take turns; waiting for the pack check put its ~125 s in front
 * of Playwright's on the longest path).
 * The files whose assertions are real-time bounds
 * (vitest.config.ts TIMING) run last, after everything else, with the
 * machine to themselves.
 */
const STAGES: readonly Stage[] = [
  // The e2e specs, the pack check and some tests import the package from dist/.
  { name: 'build', command: ['npm', 'run', 'build'], after: [], live: true },
  // These only read the code: one process on one core each.
  { name: 'typecheck', command: ['npm', 'run', 'typecheck'], after: ['build'] },
  { name: 'eslint', command: ['npm', 'run', 'lint:eslint'], after: ['build'] },
  { name: 'prettier', command: ['npm', 'run', 'lint:format'], after: [] },
  // No `lint:layers` stage: test/layout/import-graph.test.ts ("keeps every
  // layering rule") cruises the same src/ with the same config in the Vitest
  // stage, so a second dependency-cruiser run (3 CPU s) would judge it twice.
  { name: 'vitest', command: ['npx', 'vitest', 'run', '--project', 'suite', '--project', 'redis', ...VITEST_TIMES], after: ['build'], live: true },
  { name: 'pack check', command: ['npx', 'tsx', 'scripts/pack-check.ts'], after: ['build'] },
  { name: 'playwright', command: ['npx', 'playwright', 'test'], after: ['build'] },
  {
    name: 'vitest timing',
    command: ['npx', 'vitest', 'run', '--project', 'timing', '--project', 'faults', ...VITEST_TIMES],
    after: ['vitest', 'playwright', 'typecheck', 'eslint', 'prettier'],
    live: true,
  },
];

type Outcome = { readonly state: 'passed' | 'failed'; readonly code: number | null } | { readonly state: 'skipped'; readonly because: string };
interface Ran {
  readonly stage: Stage;
  readonly startedAt: number;
  readonly seconds: number;
  /** CPU seconds (user + system) of the stage and every process it waited for; unknown without /usr/bin/time. */
  readonly cpu?: number;
  readonly outcome: Outcome;
}

/**
 * GNU time, when the machine has it: it reports the CPU time of a stage's
 * whole process tree, which on two shared cores says more about what a
 * change saved than the wall time, which stages running side by side (and
 * anything else on the machine) stretch.
 */
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/**
 * The whole machine's CPU seconds so far, every process's (Linux's
 * /proc/stat: user, nice, system, irq and softirq, in USER_HZ ticks, 100 a
 * second on Linux); undefined elsewhere. GNU time counts only the processes
 * a stage waited for, and Chromium's renderers are not among them: the e2e
 * run alone, on the full chromium, cost the machine 155 CPU s when the
 * stage's count said 93.
 */
function machineCpu(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq: all but idle and iowait.
    const ticks = [0, 1, 2, 5, 6].map((i) => fields[i] ?? Number.NaN);
    return ticks.every(Number.isFinite) ? ticks.reduce((sum, t) => sum + t, 0) / 100 : undefined;
  } catch {
    return undefined;
  }
}

const machineAtStart = machineCpu();
const origin = performance.now();
const timesDir = mkdtempSync(join(tmpdir(), 'mailroom-times-'));
const env = { ...process.env, [TIMES_ENV]: timesDir };

function run(stage: Stage): Promise<Ran> {
  const startedAt = performance.now();
  const cpuFile = GNU_TIME && join(timesDir, `cpu-${stage.name.replace(/\W/g, '-')}.txt`);
  const [command, ...args] = cpuFile ? [GNU_TIME, '-q', '-o', cpuFile, '-f', '%U %S', ...stage.command] : stage.command;
  return new Promise((resolve) => {
    const child = spawn(command!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let held = '';
    const take = (chunk: string): void => {
      if (stage.live) process.stdout.write(chunk);
      else held += chunk;
    };
    child.stdout.setEncoding('utf8').on('data', take);
    child.stderr.setEncoding('utf8').on('data', take);
    const done = (code: number | null): void => {
      const seconds = (performance.now() - startedAt) / 1000;
      const state = code === 0 ? 'passed' : 'failed';
      const cpu = cpuFile ? readCpu(cpuFile) : undefined;
      const cpuNote = cpu === undefined ? '' : ` (CPU ${cpu.toFixed(1)} s)`;
      process.stdout.write(`\n> test: ${stage.name} ${state === 'passed' ? 'passed' : `failed (exit ${code})`} in ${seconds.toFixed(1)} s${cpuNote}\n${held}`);
      resolve({ stage, startedAt: startedAt - origin, seconds, ...(cpu === undefined ? {} : { cpu }), outcome: { state, code } });
    };
    child.once('error', (error) => {
      held += `${String(error)}\n`;
      done(null);
    });
    child.once('close', done);
  });
}

/** user + system seconds from GNU time's `%U %S` (its last line); undefined when it wrote none. */
function readCpu(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const last = readFileSync(path, 'utf8').trim().split('\n').at(-1) ?? '';
  const match = /^(\d+(?:\.\d+)?) (\d+(?:\.\d+)?)$/.exec(last);
  return match ? Number(match[1]) + Number(match[2]) : undefined;
}

/** Runs every stage once its `after` stages have passed; a stage after a failed one is skipped. */
async function runAll(stages: readonly Stage[]): Promise<Ran[]> {
  const results = new Map<string, Promise<Ran>>();
  const start = (stage: Stage): Promise<Ran> => {
    let result = results.get(stage.name);
    if (result) return result;
    result = (async () => {
      const before = await Promise.all(
        stage.after.map((name) => {
          const needed = stages.find((s) => s.name === name);
          if (!needed) throw new Error(`test: stage ${stage.name} waits for an unknown stage ${name}`);
          return start(needed);
        }),
      );
      const failed = before.filter((r) => r.outcome.state !== 'passed').map((r) => r.stage.name);
      if (failed.length > 0) return { stage, startedAt: performance.now() - origin, seconds: 0, outcome: { state: 'skipped', because: failed.join(', ') } };
      return run(stage);
    })();
    results.set(stage.name, result);
    return result;
  };
  return Promise.all(stages.map(start));
}

function readTimes(): FileTime[] {
  return ['vitest', 'playwright'].flatMap((runner) => {
    const path = join(timesDir, `${runner}.jsonl`);
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FileTime);
  });
}

const ran = await runAll(STAGES);
const total = (performance.now() - origin) / 1000;
const machineAtEnd = machineCpu();
const files = readTimes().sort((a, b) => b.seconds - a.seconds);
rmSync(timesDir, { recursive: true, force: true });

const lines = [
  '',
  '================ npm test: time by stage (wall, from the start of npm test; cpu: user + system of each stage and its children) ================',
];
lines.push(`${'stage'.padEnd(14)} ${'result'.padEnd(22)} ${'start'.padStart(7)} ${'end'.padStart(7)} ${'seconds'.padStart(8)} ${'cpu s'.padStart(8)}`);
for (const r of ran) {
  const result = r.outcome.state === 'skipped' ? `skipped (${r.outcome.because})` : r.outcome.state === 'failed' ? `FAILED (exit ${r.outcome.code})` : 'passed';
  const end = r.startedAt / 1000 + r.seconds;
  lines.push(
    `${r.stage.name.padEnd(14)} ${result.padEnd(22)} ${(r.startedAt / 1000).toFixed(1).padStart(7)} ${end.toFixed(1).padStart(7)} ${r.seconds.toFixed(1).padStart(8)} ${(r.cpu?.toFixed(1) ?? '-').padStart(8)}`,
  );
}
const cpuTotal = ran.reduce((sum, r) => sum + (r.cpu ?? 0), 0);
lines.push(
  `${'total'.padEnd(14)} ${''.padEnd(22)} ${''.padStart(7)} ${total.toFixed(1).padStart(7)} ${''.padStart(8)} ${(GNU_TIME ? cpuTotal.toFixed(1) : '-').padStart(8)}`,
);
if (machineAtStart !== undefined && machineAtEnd !== undefined) {
  const machine = machineAtEnd - machineAtStart;
  const uncounted = GNU_TIME
    ? `, ${(machine - cpuTotal).toFixed(1)} s more than the stages' count: processes no stage waited for (Chromium's renderers) and whatever else ran`
    : '';
  lines.push(`machine: ${machine.toFixed(1)} CPU s in all (/proc/stat) over ${total.toFixed(1)} s on ${availableParallelism()} cores${uncounted}`);
}
if (files.length > 0) {
  const sum = (runner: string): string =>
    files
      .filter((f) => f.runner === runner)
      .reduce((s, f) => s + f.seconds, 0)
      .toFixed(1);
  lines.push('', `---- the 15 slowest test files (wall time each; the sum of all files: vitest ${sum('vitest')} s, playwright ${sum('playwright')} s)`);
  for (const f of files.slice(0, 15)) {
    lines.push(`${f.seconds.toFixed(1).padStart(7)} s  ${f.runner.padEnd(10)} ${(f.project || '-').padEnd(8)} ${f.file} (${f.tests} tests)`);
  }
}
console.log(lines.join('\n'));
const failed = ran.filter((r) => r.outcome.state !== 'passed');
if (failed.length > 0) {
  console.error(`\ntest: ${failed.map((r) => r.stage.name).join(', ')} did not pass`);
  process.exit(1);
}
