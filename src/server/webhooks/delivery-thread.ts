// The delivery thread's entry (started by threaded-sender.ts, never
// imported by anything else): each attempt handed over is run with the
// in-thread sender, and its outcome sent back.
import { parentPort } from 'node:worker_threads';
import type { DeliveryJob, DeliveryOutcome } from './delivery-job.js';
import { WebhookSender } from './sender.js';

export type ToThread = { readonly type: 'post'; readonly id: number; readonly job: DeliveryJob } | { readonly type: 'cancel'; readonly id: number };
export type FromThread = { readonly type: 'done'; readonly id: number; readonly outcome: DeliveryOutcome };

if (parentPort) {
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
