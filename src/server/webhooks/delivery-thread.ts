// The delivery thread's entry (started by threaded-sender.ts, never
// imported by anything else): each attempt handed over is run with the
// in-thread sender, and its outcome sent back.
//
// On Linux the thread lowers its own CPU priority (nice 10): when the machine
// is busy, SMTP intake gets the CPU first and webhooks wait a little (their
// queue drains once the burst is over); on an idle machine it changes
// nothing. Elsewhere, or when not allowed, it runs at the process's priority.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { DeliveryJob, DeliveryOutcome } from './delivery-job.js';
import { WebhookSender } from './sender.js';

export type ToThread = { readonly type: 'post'; readonly id: number; readonly job: DeliveryJob } | { readonly type: 'cancel'; readonly id: number };
export type FromThread = { readonly type: 'done'; readonly id: number; readonly outcome: DeliveryOutcome };

/** The thread's own id (a Linux task), from /proc/thread-self -> `<pid>/task/<tid>`. */
function lowerThisThreadsPriority(): void {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // Not Linux, or not allowed: deliveries run at the process's priority.
  }
}

if (parentPort) {
  lowerThisThreadsPriority();
  const port = parentPort;
  const sender = new WebhookSender();
  const inFlight = new Map<number, AbortController>();
  port.on('message', (message: ToThread) => {
    if (message.type === 'cancel') return void inFlight.get(message.id)?.abort();
    const abort = new AbortController();
    inFlight.set(message.id, abort);
    void sender.post(message.job, abort.signal).then((outcome) => {
      inFlight.delete(message.id);
      port.postMessage({ type: 'done', id: message.id, outcome } satisfies FromThread);
    });
  });
}
