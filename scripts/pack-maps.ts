// Every source map reference in the packed package must lead somewhere the
// user has. The package ships dist/ only; a map whose `sources` name src/...
// (without the text inlined) sends a stack frame, a debugger or "go to
// definition" to node_modules/mailroomjs/src/..., which does not exist. The
// build emits no maps today (tsconfig.build.json says why); this keeps a
// re-enabled one honest: it must inline its sources or point at shipped files.
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

interface SourceMap {
  readonly sources?: readonly string[];
  readonly sourceRoot?: string;
  readonly sourcesContent?: readonly (string | null)[];
}

/**
 * What in `files` (the package's paths, as `npm pack` lists them, read from
 * `packageDir`) points at a file the package does not ship: a
 * `sourceMappingURL` naming a missing map, or a map's source that is neither
 * shipped nor inlined. Empty when every reference resolves.
 */
export function danglingSourceReferences(packageDir: string, files: readonly string[]): string[] {
  const shipped = new Set(files);
  const problems: string[] = [];
  for (const file of files) {
    if (/\.[cm]?[jt]s$/.test(file)) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(packageDir, file), 'utf8'))?.[1];
      if (url && !url.startsWith('data:') && !shipped.has(posix.join(posix.dirname(file), url))) {
        problems.push(`${file} names its map ${url}, which the package does not ship`);
      }
    }
    if (file.endsWith('.map')) {
      const map = JSON.parse(readFileSync(join(packageDir, file), 'utf8')) as SourceMap;
      (map.sources ?? []).forEach((source, i) => {
        if (typeof map.sourcesContent?.[i] === 'string') return;
        const target = posix.join(posix.dirname(file), map.sourceRoot ?? '', source);
        if (!shipped.has(target)) problems.push(`${file} points at ${source} (${target}), which the package neither ships nor inlines`);
      });
    }
  }
  return problems;
}
