// docs/api/ is the API reference TypeDoc makes from the TSDoc comments of the
// built package (typedoc.json: dist/*.d.ts, so `npm test` builds first). It
// is checked in so it reads on the repository host and the registry; this
// test regenerates it into a scratch directory and fails, naming the pages,
// when the checked-in copy is not what `npm run docs:api` writes today. It is
// split into a page per entry point, class and interface (typedoc.json's
// outputFileStrategy), so no page is a wall to scroll through.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { HEAVY_TEST_TIMEOUT_MS } from '../support/test-timeouts.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CHECKED_IN = join(ROOT, 'docs/api');
const TYPEDOC = join(ROOT, 'node_modules/typedoc/bin/typedoc');

function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** The pages that differ between `expected` and `actual`, each with why, in words. */
function differences(expected: Map<string, string>, actual: Map<string, string>): string[] {
  const names = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  return names.flatMap((name) => {
    const want = expected.get(name);
    const have = actual.get(name);
    if (have === undefined) return [`docs/api/${name} is missing`];
    if (want === undefined) return [`docs/api/${name} should not exist any more`];
    if (want === have) return [];
    const wantLines = want.split('\n');
    const haveLines = have.split('\n');
    const line = wantLines.findIndex((text, i) => text !== haveLines[i]);
    return [`docs/api/${name} differs from line ${line + 1}: ${JSON.stringify(haveLines[line])} is now ${JSON.stringify(wantLines[line])}`];
  });
}

describe('the API reference in docs/api/', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'mailroom-api-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  // TypeDoc builds a TypeScript program of dist/: 46 s of a 60 s timeout in stop 49's CI, on a loaded machine.
  it('is what `npm run docs:api` makes from the current TSDoc comments', { timeout: HEAVY_TEST_TIMEOUT_MS }, async () => {
    expect(existsSync(join(ROOT, 'dist/index.d.ts')), 'dist/ is missing: run `npm run build` first (npm test does)').toBe(true);
    await promisify(execFile)(process.execPath, [TYPEDOC, '--out', scratch, '--logLevel', 'Warn'], { cwd: ROOT });
    const problems = differences(filesUnder(scratch), filesUnder(CHECKED_IN));
    expect(problems, 'docs/api/ is stale: run `npm run docs:api` and commit docs/api/').toEqual([]);
  });

  it('is split into pages a reader can take in, none over 32 KB', () => {
    const pages = filesUnder(CHECKED_IN);
    const large = [...pages].filter(([, text]) => Buffer.byteLength(text) > 32 * 1024).map(([name, text]) => `${name} (${Buffer.byteLength(text)} bytes)`);
    expect(large, 'a page of docs/api/ grew past 32 KB: give more kinds their own page (typedoc.json membersWithOwnFile)').toEqual([]);
    expect(pages.has('mailroomjs/classes/Inbox.md')).toBe(true);
  });

  it('names a stale page, a missing one and one left over', () => {
    const fresh = new Map([
      ['README.md', '# mailroomjs\n'],
      ['mailroomjs.md', 'a\nb\n'],
    ]);
    const old = new Map([
      ['mailroomjs.md', 'a\nc\n'],
      ['gone.md', 'x'],
    ]);
    expect(differences(fresh, old)).toEqual([
      'docs/api/README.md is missing',
      'docs/api/gone.md should not exist any more',
      'docs/api/mailroomjs.md differs from line 2: "c" is now "b"',
    ]);
  });
});
