// `npm run build` step: replaces dist/checks/caniemail.js (which tsgo emits
// as a re-export of the `caniemail` package) with a bundle of the package,
// its dependencies and its caniemail.com data, and drops the declarations
// that would name the package (nothing public refers to them). Why:
// src/checks/caniemail.ts. The bundle opens with the licence notice of every
// package in it (MIT, BSD-2-Clause, CC0: as each says).
//
// caniemail 2.x reads its data at run time, `require('../data/caniemail.json')`
// from dist/json.js: a path that exists only inside its own package. The
// plugin below serves that module as an import of the same file, which esbuild
// inlines; the build fails when the bundle still reads that path, so a
// caniemail that moves its data breaks the build, not a user's check.
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'dist/checks/caniemail.js');

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
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  write: false,
  metafile: true,
  legalComments: 'none',
  // Some of its dependencies are CommonJS and require Node's own modules (micromatch: util), which an ES module bundle does through this.
  banner: { js: "import { createRequire as __mailroomCreateRequire } from 'node:module';\nconst require = __mailroomCreateRequire(import.meta.url);" },
  plugins: [inlineData],
  logLevel: 'warning',
});
const code = result.outputFiles[0]!.text;
if (/['"]\.\.\/data\/caniemail\.json['"]/.test(code)) {
  throw new Error(
    'bundle-caniemail: the bundle still reads ../data/caniemail.json at run time: caniemail changed how it loads its data; update the plugin in scripts/bundle-caniemail.ts',
  );
}

/** Each bundled package's folder (node_modules/<name> or node_modules/@scope/<name>, nested ones too), once. */
const packages = [...new Set(Object.keys(result.metafile.inputs).flatMap((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []))].sort();
const notices = packages.map((folder) => {
  const dir = join(ROOT, folder);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
  const licenceFile = readdirSync(dir).find((file) => /^licen[cs]e/i.test(file));
  const licence = pkg.license ?? 'see below';
  // A package without a licence file (binary-search: CC0-1.0, public domain) asks for no notice.
  if (!licenceFile) return `${pkg.name}@${pkg.version} (${licence}; the package has no licence file)`;
  return `${pkg.name}@${pkg.version} (${licence}):\n\n${readFileSync(join(dir, licenceFile), 'utf8').trim()}`;
});
const banner = `/*!\n * caniemail and what it needs, bundled for mailroom's html check (scripts/bundle-caniemail.ts).\n *\n${notices
  .join('\n\n')
  .split('\n')
  .map((line) => ` * ${line.replaceAll('*/', '* /')}`.trimEnd())
  .join('\n')}\n */\n`;
writeFileSync(OUT, banner + code);
rmSync(join(dirname(OUT), 'caniemail.d.ts'), { force: true });
console.log(`caniemail: dist/checks/caniemail.js ${((banner.length + code.length) / 1024).toFixed(1)} KiB, ${packages.length} packages`);
