// The licence notice a bundle opens with: every package esbuild put in it
// (from its metafile), with its licence text, as each package's licence
// asks (MIT, BSD-2-Clause, ...). Shared by the build's two bundles,
// scripts/bundle-caniemail.ts and scripts/build-cjs.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';

/** Each bundled package's folder (node_modules/<name> or node_modules/@scope/<name>, nested ones too), once. */
export function bundledPackages(metafile: Metafile): string[] {
  return [...new Set(Object.keys(metafile.inputs).flatMap((input) => /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1] ?? []))].sort();
}

/** A `/*! ... *\/` comment opening with `title`, then each package of `folders` (under `root`) with its licence. */
export function licenceBanner(root: string, folders: readonly string[], title: string): string {
  const notices = folders.map((folder) => {
    const dir = join(root, folder);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string; license?: string };
    const licenceFile = readdirSync(dir).find((file) => /^licen[cs]e/i.test(file));
    const licence = pkg.license ?? 'see below';
    // A package without a licence file (binary-search: CC0-1.0, public domain) asks for no notice.
    if (!licenceFile) return `${pkg.name}@${pkg.version} (${licence}; the package has no licence file)`;
    return `${pkg.name}@${pkg.version} (${licence}):\n\n${readFileSync(join(dir, licenceFile), 'utf8').trim()}`;
  });
  return `/*!\n * ${title}\n *\n${notices
    .join('\n\n')
    .split('\n')
    .map((line) => ` * ${line.replaceAll('*/', '* /')}`.trimEnd())
    .join('\n')}\n */\n`;
}
