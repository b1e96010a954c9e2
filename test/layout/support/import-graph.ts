// Reads a source tree's import graph through dependency-cruiser's API with the
// repository's own layering config, so the test judges exactly what
// `npm run lint:layers` judges.
import { appendFile, cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CONFIG_FILE = join(REPO_ROOT, '.dependency-cruiser.mjs');
const TSCONFIG_FILE = join(REPO_ROOT, 'tsconfig.json');

export async function ruleNames(): Promise<string[]> {
  const { ruleSet } = await extractDepcruiseOptions(CONFIG_FILE);
  return [...(ruleSet?.forbidden ?? []), ...(ruleSet?.required ?? [])].map(({ name }) => name ?? '(unnamed)');
}

/** Cruises `src` under `root` with the layering rules. */
export async function cruiseTree(root: string): Promise<ICruiseResult> {
  const options: ICruiseOptions = {
    ...(await extractDepcruiseOptions(CONFIG_FILE)),
    baseDir: root,
    // Absolute, because the tree may live outside the repository.
    tsConfig: { fileName: TSCONFIG_FILE },
    // Temporary trees reach node_modules through a symlink; keeping it makes
    // npm targets read node_modules/... exactly as they do in the repository.
    preserveSymlinks: root !== REPO_ROOT,
    outputType: 'json',
  };
  const { output } = await cruise(['src'], options, {}, { tsConfig: extractTSConfig(TSCONFIG_FILE) });
  return typeof output === 'string' ? (JSON.parse(output) as ICruiseResult) : output;
}

/**
 * One line per violation: `rule: from -> to`; for a cycle, which is reported
 * once, the whole way round; for a file that should not exist, `rule: file`.
 */
export function describeViolation({ rule, from, to, type, cycle }: IViolation): string {
  if (type === 'module') return `${rule.name}: ${from}`;
  const path = type === 'cycle' && cycle ? [from, ...cycle.map(({ name }) => name)] : [from, to];
  return `${rule.name}: ${path.join(' -> ')}`;
}

export function violationsOf(result: ICruiseResult): string[] {
  return result.summary.violations.map(describeViolation).sort();
}

/**
 * The message the test prints above the diff when the graph breaks a rule;
 * the closing newline keeps vitest's "expected ..." off the last violation.
 */
export function report(violations: readonly string[]): string {
  return [`${violations.length} layering violation(s):`, ...violations.map((line) => `  ${line}`), ''].join('\n');
}

/** Every internal edge of the graph as `from -> to`, type-only ones included. */
export function edgesOf(result: ICruiseResult): string[] {
  return result.modules.flatMap((module) => module.dependencies.map((dependency) => `${module.source} -> ${dependency.resolved}`));
}

const trees: string[] = [];

/** A fresh directory whose node_modules is the repository's, so npm imports resolve. */
async function emptyTree(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'mailroom-import-graph-'));
  trees.push(root);
  await symlink(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  return root;
}

export async function treeOf(files: Readonly<Record<string, string>>): Promise<string> {
  const root = await emptyTree();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), `${text}\n`);
  }
  return root;
}

export async function copyOfRealSrc(): Promise<string> {
  const root = await emptyTree();
  await cp(join(REPO_ROOT, 'src'), join(root, 'src'), { recursive: true });
  return root;
}

/**
 * Appends each line to its file, creating the file if need be. An import may
 * follow other statements, so appending is enough to plant one.
 */
export async function plant(root: string, lines: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, line] of Object.entries(lines)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await appendFile(join(root, path), `${line}\n`);
  }
}

export async function removeTrees(): Promise<void> {
  await Promise.all(trees.splice(0).map((root) => rm(root, { recursive: true, force: true })));
}
