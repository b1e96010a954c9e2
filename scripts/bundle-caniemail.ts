// `npm run build` step: replaces dist/checks/caniemail.js (which tsgo emits
// as a re-export of the `caniemail` package) with a bundle of the package,
// its dependencies and its caniemail.com data, and drops the declarations
// that would name the package (nothing public refers to them). Why:
// src/checks/caniemail.ts. The bundle opens with the licence notice of every
// package in it (MIT, BSD-2-Clause, CC0: as each says).
//
// The bundle is CommonJS, dist/checks/caniemail.cjs, and caniemail.js is
// an ES module that re-exports it: the ES module build imports it, and the
// CommonJS build of mailroomjs/jest (scripts/build-cjs.ts) requires the same
// file, so its 1.1 MB ship once.
//
// caniemail 2.x reads its data at run time, `require('../data/caniemail.json')`
// from dist/json.js: a path that exists only inside its own package. The
// plugin below serves that module as an import of the same file, which esbuild
// inlines; the build fails when the bundle still reads that path, so a
// caniemail that moves its data breaks the build, not a user's check.
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { bundledPackages, licenceBanner } from './bundle-notices.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist/checks/caniemail.cjs');
const SHIM = join(ROOT, 'dist/checks/caniemail.js');

const inlineData: Plugin = {
  name: 'caniemail-data-inline',
  setup(build) {
    build.onLoad({ filter: /[\\/]caniemail[\\/]dist[\\/]json\.js$/ }, (args) => ({
      contents: `export { default as caniEmailJson } from ${JSON.stringify(join(dirname(args.path), '../data/caniemail.json'))};`,
      loader: 'js',
    }));
  },
};

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/checks/caniemail.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  write: false,
  metafile: true,
  legalComments: 'none',
  plugins: [inlineData],
  logLevel: 'warning',
});
const code = result.outputFiles[0]!.text;
if (/['"]\.\.\/data\/caniemail\.json['"]/.test(code)) {
  throw new Error(
    'bundle-caniemail: the bundle still reads ../data/caniemail.json at run time: caniemail changed how it loads its data; update the plugin in scripts/bundle-caniemail.ts',
  );
}

const packages = bundledPackages(result.metafile);
const banner = licenceBanner(ROOT, packages, "caniemail and what it needs, bundled for mailroom's html check (scripts/bundle-caniemail.ts).");
writeFileSync(OUT, banner + code);
// A default import of CommonJS works in Node's ES modules, Vitest and Jest's alike; named ones rely on each guessing the names.
writeFileSync(
  SHIM,
  "// caniemail, bundled as CommonJS beside this file (scripts/bundle-caniemail.ts).\nimport bundle from './caniemail.cjs';\n\nexport const { caniemail, rawData } = bundle;\n",
);
rmSync(join(dirname(OUT), 'caniemail.d.ts'), { force: true });
console.log(`caniemail: dist/checks/caniemail.cjs ${((banner.length + code.length) / 1024).toFixed(1)} KiB, ${packages.length} packages`);
