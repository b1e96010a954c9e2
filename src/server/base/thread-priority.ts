// Background threads (webhook deliveries, mail checks) run below the
// thread that takes mail in and answers HTTP: when the machine is busy,
// SMTP intake and the API get the CPU first and the background work waits a
// little; on an idle machine it changes nothing. Linux only: elsewhere, or
// when not allowed, the thread runs at the process's priority.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Lowers the calling thread (a Linux task, found through /proc/thread-self -> `<pid>/task/<tid>`) to nice 10. */
export function lowerThisThreadsPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not allowed: the thread runs at the process's priority.
  }
}
