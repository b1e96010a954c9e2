// A check thread's entry (started by check-threads.ts, never imported by
// anything else): each message handed over, as its source, is parsed here
// (a large mail's parse is work too, and the route may be its first read)
// and checked with `checkMail`, the engine the client's `mail.check()` runs,
// and its report sent back. The thread checks one message at a time; a
// check that runs past its deadline is stopped by ending the thread, which
// is the only way to stop code that does not yield.
//
// Like the webhooks' delivery thread, it first loads caniemail's data at the
// process's priority (the cold work every first html check pays), then runs
// at nice 10 (base/thread-priority.ts): SMTP intake and the API get the CPU
// first.
import { parentPort } from 'node:worker_threads';
import type { CheckableMail } from '../../checks/problem.js';
import { checkMail } from '../../checks/run-checks.js';
import { checkReportToWire, type WireCheckReport } from '../../checks/wire.js';
import { lowerThisThreadsPriority } from '../base/thread-priority.js';
import { parseMail } from '../store/mime-parse.js';

/** A message to check, as received, and its size as stored; `links` adds the links check (the route's POST), reaching only `allowPrivate`'s private hosts. */
export type ToThread = {
  readonly id: number;
  readonly source: Uint8Array;
  readonly size: number;
  readonly links: boolean;
  readonly allowPrivate: readonly string[];
};
export type FromThread =
  | { readonly id: number; readonly report: WireCheckReport }
  /** The checks threw: a bug in them, reported with its stack. */
  | { readonly id: number; readonly failure: string };

const WARM_UP: CheckableMail = { html: '<p style="display:flex">warm-up</p>', text: 'warm-up', size: 0, subject: 'warm-up' };

if (parentPort) {
  const port = parentPort;
  // Checks handed over meanwhile run at once; only the priority waits for the warm-up.
  void checkMail(WARM_UP, { only: ['html'] })
    .catch(() => {})
    .finally(lowerThisThreadsPriority);
  port.on('message', ({ id, source, size, links, allowPrivate }: ToThread) => {
    checkSource(source, size, links, allowPrivate).then(
      (report) => port.postMessage({ id, report: checkReportToWire(report) } satisfies FromThread),
      (error: unknown) => port.postMessage({ id, failure: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies FromThread),
    );
  });
}

async function checkSource(source: Uint8Array, size: number, links: boolean, allowPrivate: readonly string[]) {
  const parsed = await parseMail(Buffer.from(source.buffer, source.byteOffset, source.byteLength));
  const mail: CheckableMail = { html: parsed.html ?? '', text: parsed.text ?? '', size, subject: parsed.subject };
  // No browser here: accessibility is the Playwright adapter's.
  return checkMail(mail, { skip: links ? ['accessibility'] : ['links', 'accessibility'], links: { allowPrivate } });
}
