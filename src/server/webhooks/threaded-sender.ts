// The delivery thread: webhook attempts are built, signed and sent in a
// worker thread of their own, so the SMTP intake's thread never parses a
// message for a webhook, serialises its body or runs an HTTP client. Parsing
// a message into its API view costs more than taking the message in (about
// 0.9 ms against 0.3 ms here), and in the intake's thread it halved the SMTP
// ingest rate with one webhook registered (bench/webhooks.ts).
//
// `ThreadedSender` is the intake side: it hands each attempt, or an ordered
// endpoint's run of them, over as plain data (delivery-job.ts) in one
// message, and gets their outcomes back in one; the thread
// (delivery-thread.ts) runs `WebhookSender` (sender.ts). The thread starts
// with the first registration (or, failing that, the first attempt), so a
// server without webhooks runs none, and a first event does not wait for
// the thread to load. The thread's module is found beside this one, from
// source or built (base/worker-module.ts).
import type { Worker } from 'node:worker_threads';
import { startWorkerModule } from '../base/worker-module.js';
import type { DeliveryJob, DeliveryOutcome, DeliverySender } from './delivery-job.js';
import type { FromThread, ThreadData, ToThread } from './delivery-thread.js';

export class ThreadedSender implements DeliverySender {
  #thread: Worker | undefined;
  #next = 0;
  readonly #waiting = new Map<number, (outcomes: readonly DeliveryOutcome[]) => void>();
  readonly #data: ThreadData;

  constructor(options: { readonly webhookAllow?: readonly string[] } = {}) {
    this.#data = { webhookAllow: [...(options.webhookAllow ?? [])] };
  }

  async post(job: DeliveryJob, signal: AbortSignal): Promise<DeliveryOutcome> {
    return (await this.postRun([job], signal))[0]!;
  }

  /** One message to the thread for the whole run, and one back (delivery-job.ts). */
  postRun(jobs: readonly DeliveryJob[], signal: AbortSignal): Promise<readonly DeliveryOutcome[]> {
    const thread = this.#threadNow();
    const id = ++this.#next;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve([{ result: { kind: 'failure', reason: 'cancelled', detail: 'cancelled before it went' }, latencyMs: 0, excerpt: '' }]);
      const cancel = () => thread.postMessage({ type: 'cancel', id } satisfies ToThread);
      signal.addEventListener('abort', cancel, { once: true });
      this.#waiting.set(id, (outcomes) => {
        signal.removeEventListener('abort', cancel);
        resolve(outcomes);
      });
      thread.postMessage({ type: 'run', id, jobs } satisfies ToThread);
    });
  }

  warm(): void {
    this.#threadNow();
  }

  async close(): Promise<void> {
    const thread = this.#thread;
    this.#thread = undefined;
    this.#failAll('the server is closing');
    await thread?.terminate();
  }

  #threadNow(): Worker {
    if (this.#thread) return this.#thread;
    const thread = startWorkerModule(import.meta.url, 'delivery-thread', { workerData: this.#data });
    // A thread waiting for attempts keeps no process alive; a pending retry's timer does not either (dispatcher.ts).
    thread.unref();
    thread.on('message', (message: FromThread) => {
      const settle = this.#waiting.get(message.id);
      this.#waiting.delete(message.id);
      settle?.(message.outcomes);
    });
    const lost = (why: string) => {
      if (this.#thread !== thread) return;
      this.#thread = undefined;
      this.#failAll(why);
    };
    thread.on('error', (error) => lost(`the delivery thread failed: ${error.message}`));
    thread.on('exit', (code) => lost(`the delivery thread exited (${code})`));
    this.#thread = thread;
    return thread;
  }

  /** Attempts in flight when the thread went away fail as network trouble: retried on the next thread. */
  #failAll(detail: string): void {
    for (const settle of this.#waiting.values()) settle([{ result: { kind: 'failure', reason: 'network', detail }, latencyMs: 0, excerpt: '' }]);
    this.#waiting.clear();
  }
}
