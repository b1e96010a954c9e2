// `npm run test:pack`: the package as a user receives it. Packs mailroom with
// `npm pack` and installs the tarball into a new project next to vitest and
// @playwright/test. The tarball must hold package.json, LICENSE, README.md,
// CHANGELOG.md and dist/ at its top, and nothing else. The install must warn
// of no engine (`EBADENGINE`: the README says Node 20.19+), and no source map
// may lead outside the package (scripts/pack-maps.ts). In the project it runs
// `mailroomjs --help` (the bin `npx mailroomjs` runs), the type matrix
// (scripts/pack-types.ts: every entry point with skipLibCheck false, under
// each TypeScript version asked for in MAILROOM_PACK_TYPESCRIPT, the pinned
// one by default), and the examples of the README and of every guide in
// docs/ (scripts/readme-examples.ts): the files they show for Playwright and
// for Vitest, side by side in one project as written, only the README's
// fixed ports moved to free ones, type-checked (the project is the type
// matrix's NodeNext program, so each TypeScript version checked compiles
// them) and then run by both runners against the Acme demo app standing in
// for "your app" (`npm start`, and src/app.ts in the template,
// test/pack/project): Vitest's files, then the quick start's spec as the
// README runs it (its webServer entries starting `mailroom serve` and the
// app), then every spec by the CI guide's recipe, two shards side by side
// against one server (scripts/pack-shards.ts). The Jest guide's tests run
// in each Jest set-up, CommonJS and ES modules, Jest 30 and 29, with a wait
// that must fail (scripts/pack-jest.ts). It also compares the export
// list of every entry point, as the type matrix's NodeNext program and, at
// run time, a test beside the README's Vitest files see it, with
// test/pack/exports.txt (scripts/pack-exports.ts); `--update-exports`
// rewrites that file instead.
// Exits non-zero, with the failing command's output, when any step fails;
// the project is kept for a post-mortem then.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import type { Program } from 'typescript';
import { CHROMIUM_ARGS, findChromium } from '../e2e/chromium.js';
import { freePort } from '../test/support/free-port.js';
import {
  RUNTIME_PROBE_TEST,
  assertExportsFileMatches,
  assertRuntimeMatchesTypes,
  entryPoints,
  listExports,
  readRuntimeProbe,
  updateExportsFile,
  writeRuntimeProbe,
  type EntryPoint,
} from './pack-exports.js';
import { danglingSourceReferences } from './pack-maps.js';
import { runJestSetUps, writeJestTests } from './pack-jest.js';
import { runShardsSideBySide } from './pack-shards.js';
import { exampleFiles, movePorts, type ReadmeFile } from './readme-examples.js';
import {
  ALL_ENTRIES_PROBE,
  RESOLUTIONS,
  TYPESCRIPT_ENV,
  assertNoGlobalDeclarations,
  describeFailures,
  runTypeMatrix,
  typeScriptVersions,
  writeTypeMatrix,
  type TypeScript,
  type TypeVerdict,
} from './pack-types.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/**
 * The providers' SDKs docs/providers.md's example uses, installed into the
 * project at the versions mailroom tests with; and React's types, which
 * resend's declarations import (a TypeScript project using resend with
 * skipLibCheck off needs them, whether or not it sends React mail).
 */
const PROVIDER_SDKS = ['resend', '@types/react', '@aws-sdk/client-sesv2', '@sendgrid/mail', '@sendgrid/client', 'postmark', 'mailgun.js', '@getbrevo/brevo'];
const TEMPLATE = join(ROOT, 'test/pack/project');
/** What the Jest guide's set-ups need, at the versions mailroom tests with (`jest-29` is `npm:jest@29.x`). */
const JEST_PACKAGES = [
  'jest',
  'jest-29',
  '@jest/globals',
  'ts-jest',
  'babel-jest',
  '@babel/core',
  '@babel/preset-typescript',
  '@babel/plugin-transform-modules-commonjs',
];

interface Ran {
  readonly code: number | null;
  readonly output: string;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', reject);
    // Without colours: runners may print them into a pipe, and the checks read the words.
    child.once('close', (code) => resolve({ code, output: stripVTControlCharacters(output) }));
  });
}

async function timed<T>(title: string, work: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await work();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`pack check: ${title} (${seconds} s)`);
  return result;
}

function step(title: string, command: string, args: readonly string[], cwd: string, env?: NodeJS.ProcessEnv, expect?: RegExp): Promise<string> {
  return timed(title, async () => {
    const { code, output } = await run(command, args, cwd, env);
    if (code !== 0 || (expect && !expect.test(output))) {
      const why = code !== 0 ? `exited with ${code}` : `printed nothing matching ${expect}`;
      throw new Error(`pack check: ${title} failed: \`${command} ${args.join(' ')}\` in ${cwd} ${why}.\n--- its output ---\n${output}`);
    }
    return output;
  });
}

/** Waits for every step, so none is left running, then throws the first failure. */
async function sideBySide(steps: readonly Promise<unknown>[]): Promise<void> {
  const failure = (await Promise.allSettled(steps)).find((settled) => settled.status === 'rejected');
  if (failure) throw failure.reason;
}

function parseArguments(args: readonly string[]): { readonly updateExports: boolean } {
  const unknown = args.filter((arg) => arg !== '--update-exports');
  if (unknown.length > 0) throw new Error(`pack check: unknown argument ${unknown.join(' ')}; the only one is --update-exports`);
  return { updateExports: args.includes('--update-exports') };
}

/** `count` distinct free ports, below the ephemeral range (test/support/free-port.ts says why). */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  return ports;
}

/**
 * The published types under every TypeScript version asked for (scripts/pack-types.ts),
 * each resolution and entry point, skipLibCheck false, the NodeNext program
 * being the project with its `examples`; throws with every failed cell.
 * Resolves to every entry point's exports as the pinned version's NodeNext
 * program sees them.
 */
async function typeMatrix(specifiers: readonly string[], pinned: string, examples: string): Promise<EntryPoint[]> {
  assertNoGlobalDeclarations(project, 'mailroomjs');
  const cells = writeTypeMatrix(project, specifiers);
  const verdicts: TypeVerdict[] = [];
  let exports: EntryPoint[] | undefined;
  for (const version of typeScriptVersions(process.env[TYPESCRIPT_ENV], pinned)) {
    const ts = version === pinned ? loadTypeScript(project) : await installTypeScript(version);
    const title = `types: TypeScript ${version}, skipLibCheck false, ${RESOLUTIONS.join(' and ')} × ${specifiers.length} entry points alone and together, one program per resolution; the nodenext one is the project's, with ${examples}`;
    const inspect = version === pinned ? (program: Program) => (exports = listExports(ts, program, join(project, ALL_ENTRIES_PROBE))) : undefined;
    const run = await timed(title, () => runTypeMatrix(project, version, ts, cells, inspect));
    verdicts.push(...run);
  }
  const failures = describeFailures(verdicts);
  if (failures) {
    const failed = verdicts.filter((v) => !v.passed).length;
    throw new Error(
      `pack check: the published types or the examples fail to compile in ${failed} of ${verdicts.length} cells of the type matrix:\n${failures}`,
    );
  }
  if (exports === undefined) throw new Error(`pack check: the type matrix did not check the pinned TypeScript ${pinned}`);
  return exports;
}

/** The TypeScript module installed in `dir`'s node_modules. */
function loadTypeScript(dir: string): TypeScript {
  return createRequire(join(dir, 'package.json'))('typescript') as TypeScript;
}

/** Another TypeScript version, installed beside the project (npm's cache first). */
async function installTypeScript(version: string): Promise<TypeScript> {
  const prefix = join(work, `typescript-${version}`);
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'package.json'), '{ "private": true }\n');
  const args = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', `typescript@${version}`];
  await step(`npm install typescript@${version} for the type matrix`, 'npm', args, prefix);
  return loadTypeScript(prefix);
}

/**
 * A bin of the project where `npx <name>` finds it, run without npx, whose
 * own ~0.7 CPU s per run buys nothing four times over: the shards' `npx
 * mailroom serve`, the CI guide's command as written, shows that npx finds
 * the package's bins.
 */
function projectBin(name: string): string {
  return join(project, 'node_modules/.bin', name);
}

/** Throws unless the runner's output names each of `files` and none of the other runner's. */
function assertRan(runner: 'vitest' | 'playwright', output: string, files: readonly string[]): void {
  const notRun = files.filter((path) => !output.includes(runner === 'vitest' ? path : path.slice('e2e/'.length)));
  if (notRun.length > 0) throw new Error(`pack check: ${runner} did not run ${notRun.join(', ')}:\n${output}`);
  const foreign = runner === 'vitest' ? /\.spec\.ts/ : /\.test\.ts/;
  if (foreign.test(output)) throw new Error(`pack check: ${runner} ran the other runner's files:\n${output}`);
}

const { updateExports } = parseArguments(process.argv.slice(2));
interface OwnPackage {
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
  readonly bin: Record<string, string>;
  readonly exports: Record<string, string | Record<string, string>>;
}
const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as OwnPackage;
/** Every file package.json points a user at: the bins and each entry point's code and types. */
const promised = [
  ...Object.values(own.bin),
  ...Object.values(own.exports).flatMap((target) => (typeof target === 'string' ? [target] : Object.values(target))),
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
].map((path) => path.replace(/^\.\//, ''));
/** The tarball's top level, exactly: what package.json's `files` ships, and package.json itself. */
const TOP_LEVEL = ['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'package.json'];
/** The quick start's spec: run as the README runs it; every spec runs again in the shards. */
const QUICK_START_SPEC = 'e2e/signup.spec.ts';
/** The README's files the check needs at least: both runners' configs, the Vitest setup, and a test of each. */
const README_FILES = ['playwright.config.ts', QUICK_START_SPEC, 'vitest.config.ts', 'test/mailroom.setup.ts', 'test/signup.test.ts'];
/** The README's ports (mailroom serve's defaults and the app's), moved to free ones here. */
const README_PORTS = { smtp: 2525, http: 8025, app: 3000 };

/**
 * The project files of the README and the guides, the README config's ports
 * moved to `ports`; throws naming a file the README lost.
 */
function readmeProject(ports: { readonly smtp: number; readonly http: number; readonly app: number }): ReadmeFile[] {
  const files = exampleFiles(ROOT);
  const missing = README_FILES.filter((path) => !files.some((f) => f.path === path && f.page === 'README.md'));
  if (missing.length > 0) throw new Error(`pack check: README.md no longer shows ${missing.join(', ')} (a \`\`\`ts block whose first line is \`// <path>\`)`);
  const moves = new Map([
    [README_PORTS.smtp, ports.smtp],
    [README_PORTS.http, ports.http],
    [README_PORTS.app, ports.app],
  ]);
  return files.map((file) => (file.path === 'playwright.config.ts' ? movePorts(file, moves) : file));
}

/**
 * `npm start`, the README's "your app": the Acme demo app, sending its mail
 * where SMTP_HOST and SMTP_PORT say, on PORT (the README's 3000, moved).
 */
function startScript(appPort: number): string {
  const tsx = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  const main = join(ROOT, 'fixtures/demo-app/main.ts');
  const env = 'MAILROOM_SMTP_HOST=${SMTP_HOST:-127.0.0.1} MAILROOM_SMTP_PORT=${SMTP_PORT:-2525} DEMO_PORT=${PORT:-' + String(appPort) + '}';
  return `${env} ${JSON.stringify(process.execPath)} --import ${JSON.stringify(tsx)} ${JSON.stringify(main)}`;
}

const work = mkdtempSync(join(tmpdir(), 'mailroom-pack-'));
const project = join(work, 'project');
let passed = false;
try {
  const packed = await step('npm pack', 'npm', ['pack', '--pack-destination', work, '--json'], ROOT);
  const [{ filename, files, size, unpackedSize }] = JSON.parse(packed.slice(packed.indexOf('['))) as [
    { filename: string; files: { path: string }[]; size: number; unpackedSize: number },
  ];
  const shipped = new Set(files.map((f) => f.path));
  for (const path of promised) {
    if (!shipped.has(path)) throw new Error(`pack check: the tarball lacks ${path}`);
  }
  const top = [...new Set([...shipped].map((path) => path.split('/')[0]!))].sort();
  if (top.join(' ') !== TOP_LEVEL.join(' ')) {
    throw new Error(`pack check: the tarball's top level is ${top.join(', ')}; expected exactly ${TOP_LEVEL.join(', ')} (package.json \`files\`)`);
  }
  console.log(
    `pack check: the tarball holds ${top.join(', ')} (${shipped.size} files, ${(size / 1024).toFixed(0)} KiB packed, ${(unpackedSize / 1024).toFixed(0)} KiB unpacked)`,
  );

  cpSync(TEMPLATE, project, { recursive: true });
  const [smtp, http, app] = await freePorts(3);
  const ports = { smtp: smtp!, http: http!, app: app! };
  const readme = readmeProject(ports);
  const pages = [...new Set(readme.map((f) => f.page))];
  for (const page of pages) {
    console.log(
      `pack check: examples of ${page}: ${readme
        .filter((f) => f.page === page)
        .map((f) => f.path)
        .join(', ')}`,
    );
  }
  for (const file of readme) {
    mkdirSync(dirname(join(project, file.path)), { recursive: true });
    writeFileSync(join(project, file.path), file.text);
  }
  const versions = own.devDependencies;
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify(
      {
        name: 'mailroom-user',
        private: true,
        type: 'module',
        scripts: { start: startScript(ports.app) },
        devDependencies: {
          mailroomjs: `file:${join(work, filename)}`,
          '@playwright/test': versions['@playwright/test'],
          '@types/node': versions['@types/node'],
          typescript: versions.typescript,
          vite: versions.vite,
          vitest: versions.vitest,
          // docs/providers.md's example sends through each provider's own SDK.
          ...Object.fromEntries(PROVIDER_SDKS.map((name) => [name, versions[name]])),
          // The deferral lab guide's retry loop sends with nodemailer, as a user installs it.
          nodemailer: own.dependencies.nodemailer,
          '@types/nodemailer': versions['@types/nodemailer'],
          // The Jest guide's set-ups; Jest 29 beside 30 under an alias (scripts/pack-jest.ts).
          ...Object.fromEntries(JEST_PACKAGES.map((name) => [name, versions[name]])),
        },
      },
      null,
      2,
    )}\n`,
  );
  // Everything but the tarball is in npm's cache after `npm ci` here.
  const installed = await step('npm install into a new project', 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project);
  // The README says Node 20.19+: no dependency may warn that it wants a newer one (caniemail, @axe-core/playwright did).
  const engineWarnings = installed.split('\n').filter((line) => line.includes('EBADENGINE'));
  if (engineWarnings.length > 0)
    throw new Error(`pack check: npm install warned about engines on Node ${process.versions.node}:\n${engineWarnings.join('\n')}`);
  const dangling = danglingSourceReferences(join(project, 'node_modules/mailroomjs'), [...shipped]);
  if (dangling.length > 0) throw new Error(`pack check: source map references lead outside the package:\n${dangling.slice(0, 20).join('\n')}`);
  console.log(`pack check: no EBADENGINE warning on Node ${process.versions.node}, and no source map reference leads outside the package`);
  // Both bin names must be links to the one CLI.
  const cliPath = own.bin['mailroomjs'];
  if (cliPath === undefined) throw new Error("pack check: package.json has no mailroomjs bin, which the README's `npx mailroomjs --help` runs");
  const cli = realpathSync(join(project, 'node_modules/mailroomjs', cliPath));
  const wrongBins = ['mailroom', 'mailroomjs'].filter((name) => realpathSync(projectBin(name)) !== cli);
  if (wrongBins.length > 0) throw new Error(`pack check: node_modules/.bin/${wrongBins.join(' and ')} do not lead to ${cli}`);
  await step(
    'mailroomjs --help prints the usage (node_modules/.bin/mailroomjs, which `npx mailroomjs` runs)',
    projectBin('mailroomjs'),
    ['--help'],
    project,
    process.env,
    /^Usage: mailroom serve \[options\]/m,
  );
  const specifiers = entryPoints(project);
  const pinnedTypeScript = versions.typescript;
  if (pinnedTypeScript === undefined) throw new Error('pack check: package.json pins no typescript in devDependencies');
  // mailroomjs/jest loads only inside Jest (its `@jest/globals`): its keys come from the Jest runs.
  const jestSpecifier = 'mailroomjs/jest';
  const probed = specifiers.filter((s) => s !== jestSpecifier);
  writeRuntimeProbe(project, probed);
  writeJestTests(project);

  const env: NodeJS.ProcessEnv = { ...process.env, MAILROOM_CHROMIUM: findChromium(), PACK_CHROMIUM_ARGS: JSON.stringify(CHROMIUM_ARGS), CI: '1' };
  // Only the README's files point the tests at the server (and, for
  // Playwright, MAILROOM_API_URL below, as the README's config asks).
  for (const name of ['MAILROOM_API_URL', 'MAILROOM_DOMAIN', 'MAILROOM_TOKEN', 'MAILROOM_SERVER_WAIT']) delete env[name];
  const inDir = (dir: string) => readme.filter((f) => f.path.startsWith(dir)).map((f) => f.path);
  // The type checks (here, between the files they check) and Vitest (a child
  // process) need not wait for each other; the steps print as they end.
  let checkedExports: EntryPoint[] = [];
  await sideBySide([
    (async () => {
      checkedExports = await typeMatrix(
        specifiers,
        pinnedTypeScript,
        `the ${readme.length} example files of ${pages.join(', ')}, types.check.ts (expect(42).toReceiveMail() does not compile) and ${RUNTIME_PROBE_TEST}`,
      );
    })(),
    (async () => {
      // Each runner must run exactly its own files: all of them, and all passing.
      const vitest = await step(
        `vitest, the README's config: ${inDir('test/').join(', ')}, and ${RUNTIME_PROBE_TEST}: import() of ${probed.join(', ')}`,
        projectBin('vitest'),
        ['run'],
        project,
        env,
        /Tests\s+(\d+) passed \(\1\)/,
      );
      assertRan('vitest', vitest, [...inDir('test/').filter((path) => path.endsWith('.test.ts')), RUNTIME_PROBE_TEST]);
    })(),
  ]);
  const jestKeys = await runJestSetUps({ project, env, step, run, timed, tests: inDir('jest/').filter((path) => path.endsWith('.test.ts')) });
  const title = updateExports
    ? 'exports: rewrote test/pack/exports.txt from the package'
    : 'exports: every entry point exports what test/pack/exports.txt lists';
  await timed(title, () => {
    assertRuntimeMatchesTypes(checkedExports, new Map([...readRuntimeProbe(project), [jestSpecifier, jestKeys]]));
    if (updateExports) updateExportsFile(checkedExports);
    else assertExportsFileMatches(checkedExports);
  });

  // The README's config leaves the server's address to MAILROOM_API_URL (its
  // default is the README's port 8025, moved here): what a CI job sets.
  const playwrightEnv = { ...env, MAILROOM_API_URL: `http://127.0.0.1:${ports.http}` };
  const config = 'playwright.pack.config.ts';
  const playwright = await step(
    `playwright, the README's config in Chromium, starting mailroom serve and the app: ${QUICK_START_SPEC}`,
    projectBin('playwright'),
    ['test', '--config', config, QUICK_START_SPEC],
    project,
    playwrightEnv,
    /\d+ passed/,
  );
  assertRan('playwright', playwright, [QUICK_START_SPEC]);
  const shards = await runShardsSideBySide({ project, ports, env: playwrightEnv, config, step });
  assertRan('playwright', shards, inDir('e2e/'));
  passed = true;
  console.log('pack check: the packed package works in a new project');
} finally {
  if (passed) rmSync(work, { recursive: true, force: true });
  else console.error(`pack check: kept ${work} for a look`);
}
