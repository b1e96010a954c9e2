// `npm run test:pack`: the package as a user receives it. Packs mailroom with
// `npm pack`, installs the tarball into a new project next to vitest and
// @playwright/test, and runs there a type check, a Vitest signup test and a
// Playwright signup spec (the templates in test/pack/project) against the
// Acme demo app. It also compares the export list of every entry point with
// test/pack/exports.txt (scripts/pack-exports.ts); `--update-exports` rewrites
// that file instead. Exits non-zero, with the failing command's output, when
// any step fails; the project is kept for a post-mortem then.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChromium } from '../e2e/chromium.js';
import { startDemoApp } from '../fixtures/demo-app/index.js';
import {
  assertExportsFileMatches,
  assertRuntimeMatchesTypes,
  entryPoints,
  listExports,
  readRuntimeProbe,
  updateExportsFile,
  writeRuntimeProbe,
} from './pack-exports.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEMPLATE = join(ROOT, 'test/pack/project');

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
    child.once('close', (code) => resolve({ code, output }));
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

/** `count` distinct free ports: all are held open until each has been picked. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Server>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

const { updateExports } = parseArguments(process.argv.slice(2));
interface OwnPackage {
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
].map((path) => path.replace(/^\.\//, ''));
const work = mkdtempSync(join(tmpdir(), 'mailroom-pack-'));
const project = join(work, 'project');
let passed = false;
const apps: { close(): Promise<void> }[] = [];
try {
  const packed = await step('npm pack', 'npm', ['pack', '--pack-destination', work, '--json'], ROOT);
  const [{ filename, files }] = JSON.parse(packed.slice(packed.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  const shipped = new Set(files.map((f) => f.path));
  for (const path of promised) {
    if (!shipped.has(path)) throw new Error(`pack check: the tarball lacks ${path}`);
  }
  const strays = [...shipped].filter((p) => !/^(dist\/|README\.md$|package\.json$|LICENSE$)/.test(p));
  if (strays.length > 0) throw new Error(`pack check: the tarball ships files a user does not need: ${strays.join(', ')}`);

  cpSync(TEMPLATE, project, { recursive: true });
  const versions = own.devDependencies;
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify(
      {
        name: 'mailroom-user',
        private: true,
        type: 'module',
        devDependencies: {
          mailroom: `file:${join(work, filename)}`,
          '@playwright/test': versions['@playwright/test'],
          '@types/node': versions['@types/node'],
          typescript: versions.typescript,
          vite: versions.vite,
          vitest: versions.vitest,
        },
      },
      null,
      2,
    )}\n`,
  );
  // Everything but the tarball is in npm's cache after `npm ci` here.
  await step('npm install into a new project', 'npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project);
  const specifiers = entryPoints(project);
  // The type check and the export lists only read the installed package, so
  // they run side by side (the steps print as they end).
  await sideBySide([
    step('tsc: the published types (expect(42).toReceiveMail() does not compile)', 'npx', ['tsc', '-p', '.'], project),
    (async () => {
      await step(`vitest: import() of ${specifiers.join(', ')}`, 'npx', writeRuntimeProbe(project, specifiers), project, process.env, /1 passed/);
      const title = updateExports
        ? 'exports: rewrote test/pack/exports.txt from the package'
        : 'exports: every entry point exports what test/pack/exports.txt lists';
      await timed(title, () => {
        const entries = listExports(project, specifiers);
        assertRuntimeMatchesTypes(entries, readRuntimeProbe(project));
        if (updateExports) updateExportsFile(entries);
        else assertExportsFileMatches(entries);
      });
    })(),
  ]);

  // The Vitest and the Playwright signup run side by side: each starts its
  // own mail server on ports of its own, with its own demo app sending there.
  const [vitestSmtp, vitestHttp, playwrightSmtp, playwrightHttp] = await freePorts(4);
  const envFor = async (smtpPort: number, httpPort: number): Promise<NodeJS.ProcessEnv> => {
    const demo = await startDemoApp({ smtp: { host: '127.0.0.1', port: smtpPort } });
    apps.push(demo);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PACK_SMTP_PORT: String(smtpPort),
      PACK_HTTP_PORT: String(httpPort),
      DEMO_URL: demo.url,
      MAILROOM_CHROMIUM: findChromium(),
      CI: '1',
    };
    // The project's own configuration must be what points it at the server.
    delete env.MAILROOM_API_URL;
    return env;
  };
  const vitestEnv = await envFor(vitestSmtp!, vitestHttp!);
  const playwrightEnv = await envFor(playwrightSmtp!, playwrightHttp!);
  await sideBySide([
    step('vitest: a signup test with mailroom/vitest', 'npx', ['vitest', 'run'], project, vitestEnv, /1 passed/),
    step('playwright: the README signup spec with mailroom/playwright in Chromium', 'npx', ['playwright', 'test'], project, playwrightEnv, /1 passed/),
  ]);
  passed = true;
  console.log('pack check: the packed package works in a new project');
} finally {
  await Promise.all(apps.map((app) => app.close()));
  if (passed) rmSync(work, { recursive: true, force: true });
  else console.error(`pack check: kept ${work} for a look`);
}
