// The Jest part of the pack check: the Jest guide's examples
// (docs/getting-started-jest.md: its global setup, tests and three configs)
// run from the packed package in each set-up Jest projects have, in the one
// project the pack check built, sharing its node_modules:
// - ts-jest compiling to CommonJS, Jest 30, --runInBand, with a test whose
//   wait must fail: its message is checked and printed;
// - babel-jest compiling to CommonJS, Jest 30, two --shard runs side by side;
// - native ES modules (ts-jest's ESM mode, --experimental-vm-modules), Jest
//   30, two workers;
// - babel-jest compiling to CommonJS under Jest 29 (the `jest-29` alias),
//   where loading the package differs most: Jest 29's own `require` fails on
//   an ES module's syntax, Jest 30's on `require(esm)`.
// Each run also runs a probe test that records mailroomjs/jest's run-time
// export keys as that set-up loads it, and which build it loaded: the
// CommonJS one (dist/cjs/jest.cjs) in the CommonJS set-ups, the ES module
// one in the other. The keys must be the same everywhere, and the caller
// compares them with the types.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Step } from './pack-shards.js';

/** The pack check's `run`: a command's exit code and output, whatever they are. */
export type Run = (command: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv) => Promise<{ code: number | null; output: string }>;

export interface JestOptions {
  readonly project: string;
  readonly env: NodeJS.ProcessEnv;
  readonly step: Step;
  readonly run: Run;
  readonly timed: <T>(title: string, work: () => Promise<T>) => Promise<T>;
  /** The guide's Jest tests (`jest/*.test.ts`), each of which every set-up must run and pass. */
  readonly tests: readonly string[];
}

/** Beside the guide's tests, so every set-up runs it; it writes the keys where PACK_JEST_PROBE_FILE says. */
const PROBE_TEST = 'jest/exports.probe.test.ts';
/** Run by the first set-up only (its own `--testMatch`): the wait is cut before Jest's 5 s. */
const FAILING_TEST = 'jest/failing-wait.fail.ts';
const SPECIFIER = 'mailroomjs/jest';

interface SetUp {
  readonly title: string;
  /** The Jest CLI, relative to the project. */
  readonly jest: string;
  readonly config: string;
  readonly args: readonly string[];
  readonly shards?: number;
  readonly esm?: boolean;
  readonly failing?: boolean;
}

const JEST_30 = 'node_modules/jest/bin/jest.js';
const JEST_29 = 'node_modules/jest-29/bin/jest.js';

const SET_UPS: readonly SetUp[] = [
  { title: 'ts-jest, CommonJS, Jest 30, --runInBand', jest: JEST_30, config: 'jest.config.cjs', args: ['--runInBand'], failing: true },
  { title: 'babel-jest, CommonJS, Jest 30, --shard=1/2 and 2/2 side by side', jest: JEST_30, config: 'jest.babel.config.cjs', args: [], shards: 2 },
  { title: 'native ES modules, Jest 30, 2 workers', jest: JEST_30, config: 'jest.esm.config.mjs', args: ['--maxWorkers=2'], esm: true },
  // Babel here, not ts-jest: the same CommonJS load of the package in half the CPU of ts-jest's type checks.
  { title: 'babel-jest, CommonJS, Jest 29, --runInBand', jest: JEST_29, config: 'jest.babel.config.cjs', args: ['--runInBand'] },
];

/** Writes the probe and the failing test into the project (both type-checked with the examples). */
export function writeJestTests(project: string): void {
  const probe = [
    '// Written by scripts/pack-jest.ts: the run-time export keys of mailroomjs/jest, as this set-up loads it.',
    "import { writeFileSync } from 'node:fs';",
    "import { expect, test } from '@jest/globals';",
    `import * as entry from ${JSON.stringify(SPECIFIER)};`,
    '',
    "test('the run-time export keys of mailroomjs/jest', () => {",
    // CommonJS interop adds `default`; the types have none.
    "  const keys = Object.keys(entry).filter((key) => key !== 'default' && key !== '__esModule');",
    "  expect(keys).toContain('useInbox');",
    // Which build Jest loaded: a CommonJS test has `require`, an ES module none.
    "  const loaded = typeof require === 'function' ? require.resolve('mailroomjs/jest') : 'an ES module';",
    "  writeFileSync(process.env.PACK_JEST_PROBE_FILE ?? 'exports.probe.jest.json', JSON.stringify({ keys, loaded }));",
    '});',
  ];
  writeFileSync(join(project, PROBE_TEST), `${probe.join('\n')}\n`);
  const failing = [
    "// Written by scripts/pack-jest.ts: a wait that must fail, cut before Jest's own timeout, with mailroom's message.",
    "import { expect, test } from '@jest/globals';",
    "import { useInbox } from 'mailroomjs/jest';",
    "import { sendWelcome } from '../src/mailer.js';",
    '',
    'const inbox = useInbox();',
    '',
    "test('waits for an invoice', async () => {",
    '  await sendWelcome(inbox().address);',
    "  await expect(inbox()).toReceiveMail({ subject: 'Invoice' });",
    '}, 5_000);',
  ];
  writeFileSync(join(project, FAILING_TEST), `${failing.join('\n')}\n`);
}

/** What the failing wait's output must hold: mailroom's message, cut before Jest's timeout, and the failed test's mail printed. */
const FAILURE_MUST_SAY: readonly RegExp[] = [
  /expect\(inbox\)\.toReceiveMail\(filter\)/,
  /No mail matching subject ~ "Invoice" arrived at waits-for-an-invoice-[a-z0-9]+@/,
  /cut short of its 30 s budget \(the test's own timeout was [\d.]+ s away\)/,
  /Seen and rejected: "Welcome to Acme"/,
  /Expected: mail matching subject ~ "Invoice"/,
  /mailroom: the mail of the failed test jest\/failing-wait\.fail\.ts > waits for an invoice/,
];

/** Runs every set-up; resolves to mailroomjs/jest's run-time export keys, the same in all of them. */
export async function runJestSetUps({ project, env, step, run, timed, tests }: JestOptions): Promise<string[]> {
  const probeFile = (i: number) => join(project, `exports.probe.jest-${i}.json`);
  const runs = SET_UPS.map(async (setUp, i) => {
    const runEnv = { ...env, PACK_JEST_PROBE_FILE: probeFile(i), ...(setUp.esm ? { NODE_OPTIONS: '--experimental-vm-modules' } : {}) };
    const base = [join(project, setUp.jest), '--config', setUp.config, '--ci', ...setUp.args];
    const title = `jest, the guide's ${setUp.config}: ${setUp.title}`;
    if (setUp.failing) return failingRun(setUp, base, runEnv, title);
    const shards = setUp.shards ?? 1;
    const outputs = await Promise.all(
      Array.from({ length: shards }, (_, s) =>
        step(
          shards > 1 ? `${title} (shard ${s + 1})` : title,
          process.execPath,
          shards > 1 ? [...base, `--shard=${s + 1}/${shards}`] : base,
          project,
          runEnv,
          /Tests:\s+(\d+) passed, \1 total/,
        ),
      ),
    );
    assertRanAll(title, outputs.join('\n'), [...tests, PROBE_TEST]);
  });

  async function failingRun(setUp: SetUp, base: readonly string[], runEnv: NodeJS.ProcessEnv, title: string): Promise<void> {
    const args = [...base, '--testMatch', '**/jest/**/*.test.ts', '**/jest/**/*.fail.ts'];
    const { code, output } = await timed(`${title}, and ${FAILING_TEST}, whose wait must fail`, () => run(process.execPath, args, project, runEnv));
    const counts = /Tests:\s+1 failed, (\d+) passed, (\d+) total/.exec(output);
    const summary = counts && Number(counts[2]) === Number(counts[1]) + 1 ? [] : [/Tests:\s+1 failed, N passed, N\+1 total/];
    const missing = [...summary, ...FAILURE_MUST_SAY].filter((pattern) => !pattern.test(output));
    if (code !== 1 || missing.length > 0 || /Exceeded timeout/.test(output)) {
      const why = code !== 1 ? `exited with ${code}, not 1` : missing.length > 0 ? `printed nothing matching ${missing.join(', ')}` : "hit Jest's own timeout";
      throw new Error(`pack check: ${title} ${why}.\n--- its output ---\n${output}`);
    }
    assertRanAll(title, output, [...tests, PROBE_TEST]);
    console.log(`pack check: the failing wait, as Jest printed it (${setUp.title}):\n${failureBlock(output)}`);
  }

  await Promise.all(runs);
  const keys = SET_UPS.map((setUp, i) => {
    const file = probeFile(i);
    if (!existsSync(file)) throw new Error(`pack check: ${PROBE_TEST} wrote no keys in the set-up ${setUp.title}`);
    const { keys: found, loaded } = JSON.parse(readFileSync(file, 'utf8')) as { keys: string[]; loaded: string };
    const expected = setUp.esm ? 'an ES module' : 'dist/cjs/jest.cjs';
    if (!loaded.endsWith(expected)) throw new Error(`pack check: ${setUp.title} loaded ${loaded} as ${SPECIFIER}; expected ${expected}`);
    return { setUp, keys: found };
  });
  const first = keys[0]!;
  const differing = keys.filter(({ keys: k }) => [...k].sort().join(' ') !== [...first.keys].sort().join(' '));
  if (differing.length > 0) {
    throw new Error(
      `pack check: ${SPECIFIER} exports other names at run time in ${differing.map((d) => `${d.setUp.title} (${d.keys.join(', ')})`).join('; ')} than in ${first.setUp.title} (${first.keys.join(', ')})`,
    );
  }
  return first.keys;
}

/** Throws unless Jest's output has a PASS line for each of `files`. */
function assertRanAll(title: string, output: string, files: readonly string[]): void {
  const notRun = files.filter((file) => !new RegExp(`^PASS ${file.replaceAll('.', '\\.')}`, 'm').test(output));
  if (notRun.length > 0) throw new Error(`pack check: ${title} did not pass ${notRun.join(', ')}:\n${output}`);
}

/** The failed test's block of Jest's output, from its `●` heading to the file's summary. */
function failureBlock(output: string): string {
  const start = output.indexOf('● waits for an invoice');
  if (start < 0) return output;
  const end = output.indexOf('\nTest Suites:', start);
  return output
    .slice(start, end < 0 ? undefined : end)
    .split('\n')
    .map((line) => `  ${line}`.trimEnd())
    .join('\n');
}
