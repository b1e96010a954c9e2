// `mailroom serve` runs for hours beside a test suite: a promise rejected
// with no handler (a bug in a request or a delivery) or an exception thrown
// outside any request must not end it and take every test's mail with it.
// Both are logged with their stack, as bugs, and the server goes on: each
// request and delivery holds its own state, so one that failed leaves the
// others as they were.
import type { Logger } from '../server/base/log.js';

function described(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Installs the handlers; returns the function that removes them. */
export function installProcessGuards(logger: Pick<Logger, 'error'>): () => void {
  const rejected = (reason: unknown) =>
    logger.error(`mailroom: BUG: a promise was rejected and nothing handled it (the server carries on): ${described(reason)}`);
  const thrown = (error: unknown) => logger.error(`mailroom: BUG: an exception reached the top (the server carries on): ${described(error)}`);
  process.on('unhandledRejection', rejected);
  process.on('uncaughtException', thrown);
  return () => {
    process.off('unhandledRejection', rejected);
    process.off('uncaughtException', thrown);
  };
}
