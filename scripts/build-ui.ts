// `npm run build` step: bundles the web UI (src/server/ui, Preact) into
// dist/server/ui with esbuild, beside the server that serves it. One script,
// one stylesheet, one page: no CDN, nothing fetched at run time, so the UI
// works offline and its CSP can allow scripts from its own origin only.
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE = `${ROOT}src/server/ui/`;
const OUT = `${ROOT}dist/server/ui/`;

await mkdir(OUT, { recursive: true });
await build({
  entryPoints: [`${SOURCE}app.tsx`],
  outfile: `${OUT}app.js`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  logLevel: 'warning',
});
for (const file of ['index.html', 'app.css']) await copyFile(`${SOURCE}${file}`, `${OUT}${file}`);
const size = (await stat(`${OUT}app.js`)).size;
console.log(`web UI: dist/server/ui/app.js ${(size / 1024).toFixed(1)} KiB`);
