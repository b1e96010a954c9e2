// The export list of every entry point of the packed package, as TypeScript
// and the JavaScript runtime see it through the installed tarball. pack-check.ts
// compares it with the committed test/pack/exports.txt, so that any change to
// the public surface (a name added, removed, or turned from a value into a
// type) shows up as a diff in that file and is accepted on purpose. The
// names come from the type matrix's NodeNext program (scripts/pack-types.ts),
// the project's own, and the run-time keys from a test the project's Vitest
// runs beside the README's.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ImportDeclaration, Program, StringLiteral, TypeChecker } from 'typescript';
import type { TypeScript } from './pack-types.js';

export const EXPORTS_FILE = fileURLToPath(new URL('../test/pack/exports.txt', import.meta.url));
export const UPDATE_EXPORTS_COMMAND = 'npm run test:pack -- --update-exports';

const PACKAGE = 'mailroomjs';
// Under the README's Vitest `include` (test/**/*.test.ts), so its run runs
// it too, with the README's 60 s test timeout.
export const RUNTIME_PROBE_TEST = 'test/exports.probe.test.ts';
const RUNTIME_PROBE_KEYS = 'exports.probe.json';

export interface ExportedName {
  readonly name: string;
  /** `value` exists at run time; `type` only for the type checker. */
  readonly kind: 'value' | 'type';
}

export interface EntryPoint {
  /** What a user imports, e.g. `mailroomjs/server`. */
  readonly specifier: string;
  readonly names: readonly ExportedName[];
}

/** The import specifiers of the installed package's `exports` map, in its order. */
export function entryPoints(project: string): string[] {
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  return Object.keys(manifest.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => {
      if (subpath.includes('*')) throw new Error(`pack check: the exports map has a pattern (${subpath}), whose entry points cannot be listed`);
      return subpath === '.' ? PACKAGE : `${PACKAGE}/${subpath.slice(2)}`;
    });
}

/**
 * Writes a Vitest test that imports every entry point and records its
 * run-time export keys, where the README's Vitest config finds it: one
 * Vitest run for the examples and the probe (its own run cost ~4 CPU s).
 * Vitest hosts it because mailroomjs/vitest calls Vitest's `test.extend` as
 * it loads, which throws under plain node. It is TypeScript the project's
 * strict tsconfig compiles, since the type matrix's NodeNext program holds
 * test/ too.
 */
export function writeRuntimeProbe(project: string, specifiers: readonly string[]): void {
  const test = [
    '// Written by scripts/pack-exports.ts: the run-time export keys of every entry point.',
    "import { writeFileSync } from 'node:fs';",
    "import { test } from 'vitest';",
    '',
    "test('the run-time export keys of every entry point', async () => {",
    '  const keys: Record<string, string[]> = {};',
    `  for (const specifier of ${JSON.stringify(specifiers)}) keys[specifier] = Object.keys(await import(specifier));`,
    `  writeFileSync(new URL(${JSON.stringify(`../${RUNTIME_PROBE_KEYS}`)}, import.meta.url), JSON.stringify(keys));`,
    '});',
  ];
  mkdirSync(dirname(join(project, RUNTIME_PROBE_TEST)), { recursive: true });
  writeFileSync(join(project, RUNTIME_PROBE_TEST), `${test.join('\n')}\n`);
}

/** The run-time export keys per specifier that the runtime probe recorded. */
export function readRuntimeProbe(project: string): Map<string, string[]> {
  const keys = JSON.parse(readFileSync(join(project, RUNTIME_PROBE_KEYS), 'utf8')) as Record<string, string[]>;
  return new Map(Object.entries(keys));
}

/**
 * Every name each entry point exports, as `program` (the project's, holding
 * scripts/pack-types.ts's probe of all entry points, `probe`) sees it
 * through a namespace import. A name is a value when it is a property of
 * the namespace object: that is what a user can use at run time. Resolving
 * the alias instead would call a class re-exported with `export type` a value.
 */
export function listExports(ts: TypeScript, program: Program, probe: string): EntryPoint[] {
  const source = program.getSourceFile(probe);
  if (source === undefined) throw new Error(`pack check: the project's program has no ${probe}`);
  const checker = program.getTypeChecker();
  return source.statements.filter(ts.isImportDeclaration).map((statement) => namesOfImport(ts, checker, statement));
}

function namesOfImport(ts: TypeScript, checker: TypeChecker, statement: ImportDeclaration): EntryPoint {
  const specifier = (statement.moduleSpecifier as StringLiteral).text;
  const moduleSymbol = checker.getSymbolAtLocation(statement.moduleSpecifier);
  const binding = statement.importClause?.namedBindings;
  if (moduleSymbol === undefined || binding === undefined || !ts.isNamespaceImport(binding)) {
    throw new Error(`pack check: TypeScript found no module for ${specifier}`);
  }
  const namespace = checker.getTypeAtLocation(binding.name);
  const names = checker
    .getExportsOfModule(moduleSymbol)
    .map((symbol): ExportedName => ({ name: symbol.name, kind: checker.getPropertyOfType(namespace, symbol.name) ? 'value' : 'type' }));
  return { specifier, names: names.sort((a, b) => compareText(a.name, b.name)) };
}

/** Throws unless each entry point's run-time keys are exactly the names the checker calls values. */
export function assertRuntimeMatchesTypes(entries: readonly EntryPoint[], runtime: ReadonlyMap<string, readonly string[]>): void {
  const problems = entries.flatMap(({ specifier, names }) => {
    const values = names.filter((n) => n.kind === 'value').map((n) => n.name);
    const keys = runtime.get(specifier) ?? [];
    const onlyAtRunTime = difference(keys, values);
    const onlyInTypes = difference(values, keys);
    if (onlyAtRunTime.length === 0 && onlyInTypes.length === 0) return [];
    return [
      `  ${specifier}:`,
      ...(onlyAtRunTime.length > 0 ? [`    exported at run time but not a value in the types: ${onlyAtRunTime.join(', ')}`] : []),
      ...(onlyInTypes.length > 0 ? [`    a value in the types but missing at run time: ${onlyInTypes.join(', ')}`] : []),
    ];
  });
  if (problems.length > 0) {
    throw new Error(`pack check: the published types and the JavaScript disagree on what is exported:\n${problems.join('\n')}`);
  }
}

/** test/pack/exports.txt as --update-exports writes it. */
export function formatExports(entries: readonly EntryPoint[]): string {
  const header = [
    '# The export list of every entry point of the packed package, checked by `npm run test:pack`.',
    '# `value`: exists at run time; `type`: only for TypeScript. Sorted by name.',
    `# After an intended change to the public surface: \`${UPDATE_EXPORTS_COMMAND}\`.`,
  ];
  const sections = entries.map(({ specifier, names }) => [`## ${specifier}`, ...names.map(exportLine)].join('\n'));
  return `${[header.join('\n'), ...sections].join('\n\n')}\n`;
}

/** Writes test/pack/exports.txt from what the package exports now. */
export function updateExportsFile(entries: readonly EntryPoint[]): void {
  writeFileSync(EXPORTS_FILE, formatExports(entries));
}

/** Throws, naming the added and removed names per entry point, unless test/pack/exports.txt is what the package exports. */
export function assertExportsFileMatches(entries: readonly EntryPoint[]): void {
  const committed = existsSync(EXPORTS_FILE) ? readFileSync(EXPORTS_FILE, 'utf8') : '';
  if (committed === formatExports(entries)) return;
  const expected = parseExportsFile(committed);
  const actual = new Map(entries.map(({ specifier, names }) => [specifier, names.map(exportLine)]));
  const specifiers = [...new Set([...actual.keys(), ...expected.keys()])];
  const changes = specifiers.flatMap((specifier) => describeChange(specifier, expected.get(specifier), actual.get(specifier)));
  const what = changes.length > 0 ? changes.join('\n') : '  the same names, but not in the order or form that --update-exports writes';
  throw new Error(
    `pack check: the package's exports differ from test/pack/exports.txt:\n${what}\n` +
      `If the change is intended, accept it with \`${UPDATE_EXPORTS_COMMAND}\` and commit test/pack/exports.txt.`,
  );
}

function describeChange(specifier: string, expected: readonly string[] | undefined, actual: readonly string[] | undefined): string[] {
  const added = difference(actual ?? [], expected ?? []);
  const removed = difference(expected ?? [], actual ?? []);
  if (added.length === 0 && removed.length === 0) return [];
  const note = expected === undefined ? ' (an entry point not in the file)' : actual === undefined ? ' (no longer an entry point)' : '';
  return [`  ${specifier}${note}:`, ...added.map((line) => `    added:   ${line}`), ...removed.map((line) => `    removed: ${line}`)];
}

/** The lines of each `## <specifier>` section; `#` comments and blank lines are skipped. */
function parseExportsFile(text: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let section: string[] | undefined;
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line.startsWith('## ')) {
      section = [];
      sections.set(line.slice(3).trim(), section);
    } else if (line !== '' && !line.startsWith('#')) {
      if (section === undefined || !/^(value|type) \S+$/.test(line)) {
        throw new Error(
          `pack check: line ${index + 1} of test/pack/exports.txt is neither "## <entry point>" nor "value|type <name>": ${raw}\n` +
            `Fix it, or rewrite the file with \`${UPDATE_EXPORTS_COMMAND}\`.`,
        );
      }
      section.push(line);
    }
  }
  return sections;
}

function exportLine({ kind, name }: ExportedName): string {
  return `${kind} ${name}`;
}

function difference(from: readonly string[], without: readonly string[]): string[] {
  const excluded = new Set(without);
  return from.filter((item) => !excluded.has(item));
}

/** Code-unit order: the same on every machine and locale. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
