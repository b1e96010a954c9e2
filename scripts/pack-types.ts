// The type matrix of the pack check: the published types as a user's
// compiler sees them with `skipLibCheck: false`, the setting that makes
// TypeScript check every declaration file a program loads - ours, and
// Vitest's and Playwright's as our module augmentations change them. Per
// TypeScript version and module resolution it runs `tsc` ONCE, on a program
// of one probe file per entry point (each importing that entry point alone)
// and one importing them all, as a project using both runners does: every
// entry point's imports resolve from its own probe, and with skipLibCheck
// false every declaration file is checked once per program. (It used to be
// one program per probe: 12 compiler runs of ~10 s CPU each, most of it
// re-checking the same Vitest, Playwright and Node declarations.) What one
// program cannot show is an entry point that compiles only because another
// one's program-wide declarations are loaded beside it: globals (`declare
// global`), which no file of ours has and the check asserts, and module
// augmentations, of which there is one, `declare module 'vitest'` in
// dist/vitest/matchers.d.ts, Vitest's matchers, which no other entry
// point's types import Vitest to use.
//
// The two resolutions are two programs. A bundler's (Vite, esbuild) is the
// matrix's own tsconfig, with the strictest options a user may have on.
// Node's own (NodeNext) is the user's project itself (test/pack/project's
// tsconfig.json, skipLibCheck false): its program holds the README's and the
// guides' examples, and the probes beside them, so the examples compile in
// the same compiler run that checks the published types under NodeNext - one
// run of ~15 CPU s instead of two that load the same declarations. The one
// option the project leaves off, noPropertyAccessFromIndexSignature, acts on
// property accesses in code (the examples read `process.env.CI`), not on
// declarations, and the bundler program keeps it on.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The TypeScript versions mailroom supports, the newest patch of each minor.
 * `MAILROOM_PACK_TYPESCRIPT=supported` checks them all; a version npm cannot
 * install (offline, and not in its cache) fails the check, saying which.
 */
export const SUPPORTED_TYPESCRIPT: readonly string[] = Object.freeze(['5.4.5', '5.5.4', '5.6.3', '5.7.3', '5.8.3', '5.9.3']);

/** Which versions to check: a comma-separated list, or `supported`; unset means only the pinned one. */
export const TYPESCRIPT_ENV = 'MAILROOM_PACK_TYPESCRIPT';

/** The module settings of a project a user is likely to have: a bundler's (Vite, esbuild) and Node's own (the user's project's). */
export const RESOLUTIONS = Object.freeze(['bundler', 'nodenext'] as const);

/**
 * The bundler program's settings, the strictest a user may have on: with
 * them off, some mistakes in a declaration file would go unseen.
 */
const BUNDLER_OPTIONS = Object.freeze({
  target: 'ES2022',
  module: 'ESNext',
  moduleResolution: 'Bundler',
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noPropertyAccessFromIndexSignature: true,
  verbatimModuleSyntax: true,
});

const MATRIX_DIR = 'type-matrix';
/** The user's project's tsconfig, the NodeNext program: it must list the probes too. */
const PROJECT_TSCONFIG = 'tsconfig.json';
const ALL_ENTRIES = 'all entry points';

/** The versions to check, from `MAILROOM_PACK_TYPESCRIPT`; the pinned one when it is unset. */
export function typeScriptVersions(setting: string | undefined, pinned: string): string[] {
  const value = setting?.trim();
  if (!value) return [pinned];
  if (value === 'supported') return [...SUPPORTED_TYPESCRIPT];
  const versions = value.split(',').map((v) => v.trim());
  const bad = versions.filter((v) => !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(v));
  if (bad.length > 0)
    throw new Error(
      `pack check: ${TYPESCRIPT_ENV} lists ${bad.map((v) => JSON.stringify(v)).join(', ')}; expected exact versions like 5.4.5,5.9.3, or "supported"`,
    );
  return [...new Set(versions)];
}

/** One cell of the matrix: a tsconfig (in the project) whose files import each entry point alone, and all together. */
export interface TypeCell {
  /** What the program's probes import. */
  readonly entry: string;
  readonly resolution: string;
  /** The tsconfig's path, relative to the project. */
  readonly tsconfig: string;
}

/**
 * Writes one probe per entry point (and one importing them all) into the
 * project, and the bundler program's tsconfig listing them; returns the
 * cells: that tsconfig, and the project's own (NodeNext, which lists the
 * probes beside the examples; throws when it does not, or is not NodeNext
 * with skipLibCheck false). Each TypeScript version runs every cell.
 */
export function writeTypeMatrix(project: string, specifiers: readonly string[]): TypeCell[] {
  mkdirSync(join(project, MATRIX_DIR), { recursive: true });
  const probes: [string, readonly string[]][] = [...specifiers.map((s): [string, readonly string[]] => [s, [s]]), [ALL_ENTRIES, specifiers]];
  const files = probes.map(([entry, imported], index) => {
    const probe = `probe-${index}.ts`;
    const lines = imported.map((specifier, i) => `import * as entry${i} from ${JSON.stringify(specifier)};`);
    const uses = imported.map((_, i) => `typeof entry${i}`).join(', ');
    writeFileSync(
      join(project, MATRIX_DIR, probe),
      `// Written by scripts/pack-types.ts: ${entry}, as a user's program loads it.\n${lines.join('\n')}\nexport type Loaded = [${uses}];\n`,
    );
    return probe;
  });
  assertProjectIsNodeNextCell(project);
  const entry = `${specifiers.join(', ')} each alone, and ${ALL_ENTRIES}`;
  const bundler = `${MATRIX_DIR}/tsconfig.bundler.json`;
  writeFileSync(join(project, bundler), `${JSON.stringify({ compilerOptions: BUNDLER_OPTIONS, files }, null, 2)}\n`);
  return [
    { entry, resolution: 'bundler', tsconfig: bundler },
    { entry: `${entry}, beside the examples and types.check.ts`, resolution: 'nodenext', tsconfig: PROJECT_TSCONFIG },
  ];
}

/** Throws unless the project's tsconfig is a NodeNext program with skipLibCheck false that lists the probes. */
function assertProjectIsNodeNextCell(project: string): void {
  const config = JSON.parse(readFileSync(join(project, PROJECT_TSCONFIG), 'utf8')) as {
    compilerOptions?: { moduleResolution?: string; skipLibCheck?: boolean };
    include?: string[];
  };
  const options = config.compilerOptions ?? {};
  const wrong = [
    options.moduleResolution?.toLowerCase() === 'nodenext' ? '' : `moduleResolution is ${options.moduleResolution ?? 'unset'}, not NodeNext`,
    options.skipLibCheck === false ? '' : 'skipLibCheck is not false',
    config.include?.includes(`${MATRIX_DIR}/*.ts`) ? '' : `include does not list ${MATRIX_DIR}/*.ts`,
  ].filter(Boolean);
  if (wrong.length > 0)
    throw new Error(
      `pack check: test/pack/project/${PROJECT_TSCONFIG} is the type matrix's NodeNext program, but its ${wrong.join(', ')} (scripts/pack-types.ts)`,
    );
}

/**
 * Throws naming every declaration file of the installed package that
 * declares globals: with all probes in one program, such a file would make
 * the other entry points' probes compile with it loaded, and the matrix would
 * no longer show each entry point alone (see the top of this file).
 */
export function assertNoGlobalDeclarations(project: string, packageName: string): void {
  const dist = join(project, 'node_modules', packageName, 'dist');
  const globals = readdirSync(dist, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.d.ts'))
    .filter((path) => /^\s*declare\s+global\b/m.test(readFileSync(join(dist, path), 'utf8')));
  if (globals.length > 0)
    throw new Error(
      `pack check: ${globals.map((p) => `dist/${p}`).join(', ')} declare globals; the type matrix checks all entry points in one program, so it must go back to one program per entry point (scripts/pack-types.ts)`,
    );
}

/** What one TypeScript version said about one cell. */
export interface TypeVerdict extends TypeCell {
  readonly typescript: string;
  readonly passed: boolean;
  readonly output: string;
}

/**
 * Runs `tsc -p` of every cell with the given compiler (`tsc`: the path of
 * that version's bin/tsc), two at a time (the machine has two cores).
 */
export async function runTypeMatrix(project: string, typescript: string, tsc: string, cells: readonly TypeCell[]): Promise<TypeVerdict[]> {
  const verdicts: TypeVerdict[] = [];
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < cells.length) {
      const index = next++;
      const cell = cells[index]!;
      const { code, output } = await runNode([tsc, '-p', cell.tsconfig], project);
      verdicts[index] = { ...cell, typescript, passed: code === 0, output };
    }
  };
  await Promise.all([lane(), lane()]);
  return verdicts;
}

/** The failed cells, each with what tsc printed; empty when all passed. */
export function describeFailures(verdicts: readonly TypeVerdict[]): string {
  return verdicts
    .filter((v) => !v.passed)
    .map((v) => `--- TypeScript ${v.typescript}, moduleResolution ${v.resolution}, ${v.entry} (${v.tsconfig}):\n${v.output.trimEnd()}`)
    .join('\n');
}

function runNode(args: readonly string[], cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
