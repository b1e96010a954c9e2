// `npm run build` step: mailroomjs/jest as CommonJS, dist/cjs/jest.cjs, the
// `require` condition of its export. Why: Jest runs a test file in its own
// module system, and in a CommonJS project (ts-jest, babel-jest: most Jest
// projects) that system's `require` cannot load an ES module: Jest 29 fails
// on the `import` syntax, Jest 30 says "Must use import to load ES Module"
// and supports `require(esm)` only on Node 24.9+, whatever Node itself
// allows (Node 20.19+ does). So the adapter, with the core it needs, is
// bundled into one CommonJS file:
// - the dependencies that have a CommonJS form stay outside it, required
//   from the user's node_modules as the ES module build imports them; the
//   ES-module-only ones (p-retry, htmlparser2 and what they import) are
//   bundled, with their licence notices at the top;
// - caniemail's 1.1 MB bundle is required from dist/checks/caniemail.cjs,
//   the file the ES module build imports too (scripts/bundle-caniemail.ts);
// - `@jest/globals` stays a `require`, which Jest answers with the test
//   file's own `expect` and hooks;
// - `import.meta.url` is the bundle's own file URL: dist/cjs/ is as deep in
//   the package as every dist/<layer>/ file, so the paths the code builds
//   from it (the package.json, its own folders for stack frames) hold.
// Only mailroomjs/jest: the root and the other entry points stay ES modules
// alone, since a second, CommonJS copy of the core beside the ES one (a
// Playwright project compiled to CommonJS would load both) would hold a
// second `Inbox` class, and `isInbox` and `instanceof MailTimeoutError`
// would fail across them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundledPackages, licenceBanner } from './bundle-notices.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = 'dist/cjs/jest.cjs';

interface Manifest {
  readonly type?: string;
  readonly dependencies?: Record<string, string>;
  readonly exports?: unknown;
}

const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

/** True when `require(name)` loads the package as CommonJS: it is not `type: module`, or its exports name a `require` form. */
function hasCommonJs(name: string): boolean {
  const pkg = readManifest(join(ROOT, 'node_modules', name));
  return pkg.type !== 'module' || JSON.stringify(pkg.exports ?? {}).includes('"require"');
}

const dependencies = Object.keys(readManifest(ROOT).dependencies ?? {});
const external = [...dependencies.filter(hasCommonJs), '@jest/globals', 'expect'];

/** The core's `import('./caniemail.js')`, as a require of the CommonJS bundle both builds share. */
const sharedCaniemail: Plugin = {
  name: 'shared-caniemail',
  setup(build) {
    build.onResolve({ filter: /^\.\/caniemail\.js$/ }, () => ({ path: '../checks/caniemail.cjs', external: true }));
  },
};

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/jest/index.ts'],
  outfile: OUT,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  external,
  // Its `import()`s of packages (undici, caniemail) become requires: Jest
  // runs a CommonJS test's `import()` only with --experimental-vm-modules.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': '__mailroomImportMetaUrl' },
  banner: { js: "const __mailroomImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  write: false,
  metafile: true,
  legalComments: 'none',
  plugins: [sharedCaniemail],
  logLevel: 'warning',
});

const code = result.outputFiles[0]!.text;
const inputs = Object.keys(result.metafile.inputs);
const caniemailInside = inputs.filter((input) => /caniemail/.test(input) && !input.endsWith('caniemail-data.ts'));
if (caniemailInside.length > 0)
  throw new Error(`build-cjs: caniemail was bundled again (${caniemailInside.join(', ')}); it must stay a require of ../checks/caniemail.cjs`);
const packages = bundledPackages(result.metafile);
const banner = licenceBanner(ROOT, packages, 'mailroomjs/jest as CommonJS, with the ES-module-only packages it needs (scripts/build-cjs.ts).');
mkdirSync(dirname(join(ROOT, OUT)), { recursive: true });
writeFileSync(join(ROOT, OUT), banner + code);
console.log(
  `cjs: ${OUT} ${((banner.length + code.length) / 1024).toFixed(1)} KiB, bundled ${packages.map((p) => p.replace(/^.*node_modules\//, '')).join(', ') || 'no package'}`,
);
