// The suite's time budget, file by file. With MAILROOM_TIMES_DIR set
// (scripts/test.ts sets it for `npm test`), the Vitest and Playwright
// reporters below append one JSON line per test file to a file there, and
// scripts/test.ts prints the slowest files at the end. Without it, they do
// nothing.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** One test file's run: `seconds` is its wall time from first to last test (with its import). */
export interface FileTime {
  readonly runner: 'vitest' | 'playwright';
  /** The Vitest project, or the Playwright project ('' when the config has none). */
  readonly project: string;
  /** Relative to the repository. */
  readonly file: string;
  readonly seconds: number;
  readonly tests: number;
}

export const TIMES_ENV = 'MAILROOM_TIMES_DIR';

export function recordFileTimes(runner: FileTime['runner'], times: readonly FileTime[]): void {
  const dir = process.env[TIMES_ENV]?.trim();
  if (!dir || times.length === 0) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, `${runner}.jsonl`), times.map((t) => `${JSON.stringify(t)}\n`).join(''));
}
