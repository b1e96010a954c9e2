// The test servers' logs, kept where CI can print them. With
// MAILROOM_TEST_LOG_DIR set (.ci/run sets it), every line a test server logs
// is also appended to a file in that directory, one per process, stamped
// with the time and the server's label; .ci/run prints the files' ends when
// the suite fails. Without it, a quiet test server stays quiet.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../src/server/index.js';

const dir = process.env.MAILROOM_TEST_LOG_DIR?.trim() || undefined;
const file = dir === undefined ? undefined : join(dir, `server-${process.env.VITEST_POOL_ID ?? 'main'}-${process.pid}.log`);
if (dir !== undefined) mkdirSync(dir, { recursive: true });

/** `inner` (quiet by default), plus the log file when CI keeps one. */
export function testServerLogger(label: string, inner: Logger = { info() {}, warn() {}, error() {} }): Logger {
  if (file === undefined) return inner;
  const write = (level: string, message: string): void => {
    try {
      appendFileSync(file, `${new Date().toISOString()} [${label}] ${level}: ${message}\n`);
    } catch {
      // The log is evidence for a failure, never a cause of one.
    }
  };
  return {
    info: (message) => (write('info', message), inner.info(message)),
    warn: (message) => (write('warn', message), inner.warn(message)),
    error: (message) => (write('error', message), inner.error(message)),
  };
}
