// The delivery thread's entry (started by threaded-sender.ts, never
// imported by anything else): each attempt handed over is run with the
// in-thread sender, and its outcome sent back.
//
// On Linux the thread lowers its own CPU priority (nice 10,
// base/thread-priority.ts): when the machine is busy, SMTP intake gets the
// CPU first and webhooks wait a little (their queue drains once the burst is
// over).
// It first warms up at the process's priority: one body built and signed,
// so the cold work of a first delivery (the parser's first run, the code
// compiled on first use) is not left to a thread that a busy machine gives
// a few percent of a core (in a loaded test run that stretched a first
// attempt past ten seconds).
import { parentPort, workerData } from 'node:worker_threads';
import { signatureHeader } from '../../contract/webhook-signature.js';
import { lowerThisThreadsPriority } from '../base/thread-priority.js';
import type { DeliveryJob, DeliveryOutcome, EventPayload } from './delivery-job.js';
import { buildBody } from './event-body.js';
import { WebhookSender } from './sender.js';

/** What the thread is started with (its workerData): the `--webhook-allow` list its sender checks resolved addresses against. */
export interface ThreadData {
  readonly webhookAllow: readonly string[];
}

/** A run of jobs (one, or an ordered endpoint's backlog: `DeliverySender.postRun`) in, the outcomes of those attempted back. */
export type ToThread = { readonly type: 'run'; readonly id: number; readonly jobs: readonly DeliveryJob[] } | { readonly type: 'cancel'; readonly id: number };
export type FromThread = { readonly type: 'done'; readonly id: number; readonly outcomes: readonly DeliveryOutcome[] };

const WARM_UP: EventPayload = {
  kind: 'message',
  envelope: { id: 'evt_warm', type: 'message.received', created_at: new Date(0).toISOString(), address: 'warm@mailroom.test' },
  message: {
    id: 'warm',
    receivedAt: 0,
    size: 0,
    envelopeFrom: 'a@example.com',
    source: [
      'From: A <a@example.com>',
      'To: warm@mailroom.test',
      'Subject: warm-up',
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Your code is 123456: https://example.com/confirm',
      '--b',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Your code is <b>123456</b>: <a href="https://example.com/confirm">confirm</a></p>',
      '--b--',
      '',
    ].join('\r\n'),
  },
  rawUrl: 'http://127.0.0.1/raw',
};

async function warmUp(): Promise<void> {
  signatureHeader('warm-up', 0, await buildBody(WARM_UP));
}

if (parentPort) {
  // Attempts handed over meanwhile run at once; only the priority waits for the warm-up.
  void warmUp()
    .catch(() => {})
    .finally(lowerThisThreadsPriority);
  const port = parentPort;
  const sender = new WebhookSender({ webhookAllow: (workerData as ThreadData | null)?.webhookAllow ?? [] });
  const inFlight = new Map<number, AbortController>();
  port.on('message', (message: ToThread) => {
    if (message.type === 'cancel') return void inFlight.get(message.id)?.abort();
    const abort = new AbortController();
    inFlight.set(message.id, abort);
    void sender
      .postRun(message.jobs, abort.signal)
      .catch((error: unknown): DeliveryOutcome[] => [
        // A bug in building or sending: the attempt fails like a network failure instead of ending the thread.
        { result: { kind: 'failure', reason: 'network', detail: `the delivery thread failed: ${String(error)}` }, latencyMs: 0, excerpt: '' },
      ])
      .then((outcomes) => {
        inFlight.delete(message.id);
        port.postMessage({ type: 'done', id: message.id, outcomes } satisfies FromThread);
      })
      .catch(() => inFlight.delete(message.id));
  });
}
