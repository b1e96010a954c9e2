// How the pack check finds source map references that lead nowhere
// (scripts/pack-maps.ts); the check itself runs on the packed package.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, test } from 'vitest';
import { danglingSourceReferences } from '../../scripts/pack-maps.js';
import { scratchDirs } from '../support/scratch-dirs.js';

const scratchDir = scratchDirs('mailroom-pack-maps-');

function packageOf(files: Record<string, string>): { dir: string; paths: string[] } {
  const dir = scratchDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return { dir, paths: Object.keys(files) };
}

test('a map of dist/ whose sources are src/ files the package does not ship is reported, as the build emitted them before', () => {
  const { dir, paths } = packageOf({
    'dist/inbox/collect.js': 'export {};\n//# sourceMappingURL=collect.js.map',
    'dist/inbox/collect.js.map': JSON.stringify({ version: 3, file: 'collect.js', sources: ['../../src/inbox/collect.ts'], mappings: '' }),
    'dist/inbox/gone.js': 'export {};\n//# sourceMappingURL=gone.js.map',
  });
  expect(danglingSourceReferences(dir, paths)).toEqual([
    'dist/inbox/collect.js.map points at ../../src/inbox/collect.ts (src/inbox/collect.ts), which the package neither ships nor inlines',
    'dist/inbox/gone.js names its map gone.js.map, which the package does not ship',
  ]);
});

test('inlined sources, shipped sources, inline maps and files without a map pass', () => {
  const { dir, paths } = packageOf({
    'dist/a.js': 'export {};\n//# sourceMappingURL=a.js.map',
    'dist/a.js.map': JSON.stringify({ version: 3, sources: ['../src/a.ts'], sourcesContent: ['export {};'], mappings: '' }),
    'dist/b.js': 'export {};\n//# sourceMappingURL=b.js.map',
    'dist/b.js.map': JSON.stringify({ version: 3, sources: ['b.ts'], sourceRoot: '../src', mappings: '' }),
    'src/b.ts': 'export {};',
    'dist/c.js': 'export {};\n//# sourceMappingURL=data:application/json;base64,e30=',
    'dist/d.d.ts': 'export {};',
  });
  expect(danglingSourceReferences(dir, paths)).toEqual([]);
});
