// Temp folders for a test file's scratch files, removed after its tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Call at a file's top level: answers a function that makes a new folder
 * under the OS's temp dir named `prefix…`, and every folder it made is
 * removed once the file's tests are done.
 */
export function scratchDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}
