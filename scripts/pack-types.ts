// The type matrix of the pack check: the published types as a user's
// compiler sees them with `skipLibCheck: false`, the setting that makes
// TypeScript check every declaration file a program loads - ours, and
// Vitest's and Playwright's as our module augmentations change them. Per
// TypeScript version and module resolution it builds ONE program, of one
// probe file per entry point (each importing that entry point alone) and one
// importing them all, as a project using both runners does: every entry
// point's imports resolve from its own probe, and with skipLibCheck false
// every declaration file is checked once per program. (It used to be one
// program per probe: 12 compiler runs of ~10 s CPU each, most of it
// re-checking the same Vitest, Playwright and Node declarations.) What one
// program cannot show is an entry point that compiles only because another
// one's program-wide declarations are loaded beside it: globals (`declare
// global`), which no file of ours has and the check asserts, and module
// augmentations, of which there are two, each its runner's matchers:
// `declare module 'vitest'` in dist/vitest/matchers.d.ts and
// `declare module 'expect'` (Jest's) in dist/jest/matchers.d.ts, which no
// other entry point's types import that runner to use.
//
// The two resolutions are two programs. Node's own (NodeNext) is the user's
// project itself (test/pack/project's tsconfig.json, skipLibCheck false): its
// program holds the README's and the guides' examples, and the probes beside
// them, so the examples compile in the same program that checks the published
// types under NodeNext; the export lists (scripts/pack-exports.ts) are read
// from that program too, rather than from a third one. A bundler's (Vite,
// esbuild) is the matrix's own tsconfig, with the strictest options a user may
// have on. The one option the project leaves off,
// noPropertyAccessFromIndexSignature, acts on property accesses in code (the
// examples read `process.env.CI`), not on declarations, and the bundler
// program keeps it on.
//
// Both programs run here, through the TypeScript API of the version under
// test, not as two `tsc -p`, so that the second can leave out what the first
// has checked already (~40 CPU s became ~23 with the export lists, whose own
// program this was as well). It reports what `tsc -p` would, with two
// exceptions, neither of which can hide a mistake in our declarations:
// - TypeScript's own lib files (lib.*.d.ts, ~4 CPU s per program) are not
//   checked: their declarations are TypeScript's, and an error in them could
//   only come from a global declaration elsewhere, which the checker reports
//   where that declaration is (the lib files come first in a program), and
//   which no file of ours has (asserted).
// - The bundler program checks mailroom's own declarations, the probes, and
//   every declaration file the NodeNext program did not load or whose imports
//   resolve to other files under bundler resolution; a third-party file that
//   both load with the same resolutions (zod, Node's, Vitest's and
//   Playwright's, ~6 CPU s) was checked, with our augmentation loaded, by the
//   NodeNext program. What this leaves out is a third-party declaration file
//   that errs only under one module setting though it sees the same files;
//   that is the third party's bug, and no change of ours can cause it.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Diagnostic, Program, SourceFile } from 'typescript';

/** A TypeScript module, the one of the version under test, loaded from where npm installed it. */
export type TypeScript = typeof import('typescript');

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
/** The probe importing every entry point, one namespace import each (`import * as entry0 from 'mailroomjs'`): what the export lists read. */
export const ALL_ENTRIES_PROBE = `${MATRIX_DIR}/probe-all.ts`;

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
 * with skipLibCheck false), first, since the bundler program leaves out what
 * it checked. Each TypeScript version runs every cell.
 */
export function writeTypeMatrix(project: string, specifiers: readonly string[]): TypeCell[] {
  mkdirSync(join(project, MATRIX_DIR), { recursive: true });
  const probes: [string, readonly string[]][] = [...specifiers.map((s): [string, readonly string[]] => [s, [s]]), [ALL_ENTRIES, specifiers]];
  const files = probes.map(([entry, imported], index) => {
    const probe = entry === ALL_ENTRIES ? ALL_ENTRIES_PROBE.slice(MATRIX_DIR.length + 1) : `probe-${index}.ts`;
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
    { entry: `${entry}, beside the examples and types.check.ts`, resolution: 'nodenext', tsconfig: PROJECT_TSCONFIG },
    { entry, resolution: 'bundler', tsconfig: bundler },
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
 * Checks every cell, in order, with `ts` (the module of TypeScript `version`)
 * as `tsc -p` would but for the two exceptions at the top of this file.
 * `inspectProject` gets the project's program (the NodeNext cell) while it
 * is loaded. Between files it lets the event loop run, so the steps beside it
 * are seen to end when they do.
 */
export async function runTypeMatrix(
  project: string,
  version: string,
  ts: TypeScript,
  cells: readonly TypeCell[],
  inspectProject?: (program: Program) => void,
): Promise<TypeVerdict[]> {
  const verdicts: TypeVerdict[] = [];
  /** Third-party declaration files an earlier program checked, with the files their imports resolved to there. */
  const checkedBefore = new Map<string, string>();
  for (const cell of cells) {
    const { program, configErrors } = createProgram(ts, project, cell.tsconfig);
    const resolved = resolvedImports(program);
    const diagnostics: Diagnostic[] = [...configErrors, ...program.getConfigFileParsingDiagnostics(), ...program.getOptionsDiagnostics()];
    const checkedHere = new Map<string, string>();
    for (const file of program.getSourceFiles()) {
      diagnostics.push(...program.getSyntacticDiagnostics(file));
      if (program.isSourceFileDefaultLibrary(file)) continue;
      const imports = resolved?.(file);
      if (imports !== undefined && file.isDeclarationFile && isThirdParty(file)) {
        if (checkedBefore.get(file.fileName) === imports) continue;
        checkedHere.set(file.fileName, imports);
      }
      diagnostics.push(...program.getSemanticDiagnostics(file));
      await nextTurn();
    }
    // After the files: the checker adds global diagnostics as it meets them.
    diagnostics.push(...program.getGlobalDiagnostics());
    for (const [file, imports] of checkedHere) checkedBefore.set(file, imports);
    if (cell.tsconfig === PROJECT_TSCONFIG) inspectProject?.(program);
    const passed = !diagnostics.some((d) => d.category === ts.DiagnosticCategory.Error);
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => project, getNewLine: () => '\n' };
    verdicts.push({ ...cell, typescript: version, passed, output: ts.formatDiagnostics(diagnostics, host) });
  }
  return verdicts;
}

function createProgram(ts: TypeScript, project: string, tsconfig: string): { program: Program; configErrors: readonly Diagnostic[] } {
  const configErrors: Diagnostic[] = [];
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d: Diagnostic) => configErrors.push(d) };
  const parsed = ts.getParsedCommandLineOfConfigFile(join(project, tsconfig), {}, host);
  if (parsed === undefined) return { program: ts.createProgram({ rootNames: [], options: {} }), configErrors };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, configFileParsingDiagnostics: parsed.errors });
  return { program, configErrors };
}

/** Not mailroom's: a file of another package. */
function isThirdParty(file: SourceFile): boolean {
  return file.fileName.includes(`${sep}node_modules${sep}`) && !file.fileName.includes(`${sep}node_modules${sep}mailroomjs${sep}`);
}

/** The program's resolutions, which TypeScript's API keeps internal (5.3 and later have them). */
interface ResolutionsOfProgram {
  forEachResolvedModule?(callback: (resolution: { resolvedModule?: { resolvedFileName: string } }, name: string) => void, file: SourceFile): void;
  forEachResolvedTypeReferenceDirective?(
    callback: (resolution: { resolvedTypeReferenceDirective?: { resolvedFileName?: string } }, name: string) => void,
    file: SourceFile,
  ): void;
}

/**
 * A file's imports and type references with the files they resolved to, as
 * one string to compare between programs; undefined (no file is then left
 * out) when this TypeScript does not tell.
 */
function resolvedImports(program: Program): ((file: SourceFile) => string) | undefined {
  const resolutions = program as Program & ResolutionsOfProgram;
  if (typeof resolutions.forEachResolvedModule !== 'function' || typeof resolutions.forEachResolvedTypeReferenceDirective !== 'function') return undefined;
  return (file) => {
    const lines: string[] = [];
    resolutions.forEachResolvedModule?.((r, name) => lines.push(`${name} ${r.resolvedModule?.resolvedFileName ?? '(unresolved)'}`), file);
    resolutions.forEachResolvedTypeReferenceDirective?.(
      (r, name) => lines.push(`types ${name} ${r.resolvedTypeReferenceDirective?.resolvedFileName ?? '(unresolved)'}`),
      file,
    );
    return lines.sort().join('\n');
  };
}

/** The failed cells, each with what TypeScript said; empty when all passed. */
export function describeFailures(verdicts: readonly TypeVerdict[]): string {
  return verdicts
    .filter((v) => !v.passed)
    .map((v) => `--- TypeScript ${v.typescript}, moduleResolution ${v.resolution}, ${v.entry} (${v.tsconfig}):\n${v.output.trimEnd()}`)
    .join('\n');
}
