// The server's mail checks (the web UI's Checks tab) run in threads of their
// own, never on the thread that takes mail in over SMTP and answers HTTP.
// Mail checks read HTML that anyone who can send mail wrote; however well
// their time is bounded (src/checks/bounds.ts), a check is CPU work of up to
// seconds, and the links check waits on other hosts. Here:
//
// - each check has a deadline, counted from the call (a wait for a free
//   thread included): past it the thread is ended (`terminate()` stops code
//   that never yields) and the call refused with `503 checks_timeout`; the
//   same when the caller hangs up, or the server closes;
// - at most MAX_CHECK_THREADS checks run at once, one per thread, and
//   MAX_WAITING_CHECKS more wait for a thread; the next call is refused at
//   once with `503 unavailable` and `Retry-After`, so a burst of calls
//   cannot pile up work or memory;
// - each thread's heap is capped (CHECK_THREAD_HEAP_MB): a check past it
//   ends its thread, not the server;
// - a thread is started with the first check that needs one, and one idle
//   thread is kept for the next (with caniemail's data loaded, which the
//   first html check of a thread pays for); an ended one is replaced by the
//   next check that needs it.
import type { Worker } from 'node:worker_threads';
import type { WireCheckReport } from '../../checks/wire.js';
import { formatDuration } from '../../contract/format.js';
import { Refusal } from '../../contract/refusal.js';
import { startWorkerModule } from '../base/worker-module.js';
import type { FromThread, ToThread } from './check-thread.js';

export const MAX_CHECK_THREADS = 2;
export const MAX_WAITING_CHECKS = 8;
export const CHECK_THREAD_HEAP_MB = 256;
const IDLE_THREADS_KEPT = 1;

export interface CheckThreadsOptions {
  /** The longest one check may take, from the call to its report, in ms (the server's `checksTimeout`). */
  readonly deadlineMs: number;
}

/**
 * What a check thread is handed: the message as received (parsed in the
 * thread), its size as stored, whether to check its links, and the loopback
 * and private hosts the links check may reach (the server's `linkCheckAllow`).
 */
export interface CheckRequest {
  readonly source: Uint8Array;
  readonly size: number;
  readonly links: boolean;
  readonly allowPrivate: readonly string[];
}

interface Job {
  readonly id: number;
  readonly request: CheckRequest;
  /** Settles the call once; every later settle is ignored. */
  readonly settle: (outcome: { report: WireCheckReport } | { error: Error }) => void;
  thread?: Worker;
}

export class CheckThreads {
  readonly #deadlineMs: number;
  readonly #idle: Worker[] = [];
  readonly #running = new Map<Worker, Job>();
  readonly #waiting: Job[] = [];
  #next = 0;
  #closed = false;

  constructor(options: CheckThreadsOptions) {
    this.#deadlineMs = options.deadlineMs;
  }

  /** The checks of a message, refused when they cannot be run in time; `signal` is the caller hanging up. */
  check(request: CheckRequest, signal: AbortSignal): Promise<WireCheckReport> {
    if (this.#closed || signal.aborted) return Promise.reject(stopped());
    if (this.#running.size >= MAX_CHECK_THREADS && this.#waiting.length >= MAX_WAITING_CHECKS) {
      return Promise.reject(
        new Refusal(
          503,
          'unavailable',
          `The server is checking ${MAX_CHECK_THREADS} messages already, with ${MAX_WAITING_CHECKS} more waiting: try again in a moment`,
          { 'retry-after': '1' },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.#end(job, timedOut(this.#deadlineMs)), this.#deadlineMs);
      const hungUp = () => this.#end(job, stopped());
      signal.addEventListener('abort', hungUp, { once: true });
      let settled = false;
      const job: Job = {
        id: ++this.#next,
        request,
        settle: (outcome) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', hungUp);
          if ('report' in outcome) resolve(outcome.report);
          else reject(outcome.error);
        },
      };
      this.#waiting.push(job);
      this.#dispatch();
    });
  }

  /** The threads started and not ended: those running a check, and the idle one kept. */
  get threads(): number {
    return this.#running.size + this.#idle.length;
  }

  /** Ends every thread and refuses the checks in progress and waiting. */
  async close(): Promise<void> {
    this.#closed = true;
    const threads = [...this.#idle, ...this.#running.keys()];
    for (const job of [...this.#running.values(), ...this.#waiting]) job.settle({ error: stopped() });
    this.#idle.length = 0;
    this.#running.clear();
    this.#waiting.length = 0;
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  /** Hands waiting checks to free threads, starting threads up to the cap. */
  #dispatch(): void {
    while (this.#waiting.length > 0 && this.#running.size < MAX_CHECK_THREADS) {
      const job = this.#waiting.shift()!;
      const thread = this.#idle.pop() ?? this.#startThread();
      job.thread = thread;
      this.#running.set(thread, job);
      thread.postMessage({ id: job.id, ...job.request } satisfies ToThread);
    }
  }

  /** Stops a check: a waiting one leaves the line; a running one's thread is ended (a new one starts for the next check). */
  #end(job: Job, error: Error): void {
    job.settle({ error });
    const waitingAt = this.#waiting.indexOf(job);
    if (waitingAt !== -1) this.#waiting.splice(waitingAt, 1);
    const thread = job.thread;
    if (thread && this.#running.get(thread) === job) {
      this.#running.delete(thread);
      void thread.terminate();
      this.#dispatch();
    }
  }

  #startThread(): Worker {
    const thread = startWorkerModule(import.meta.url, 'check-thread', { resourceLimits: { maxOldGenerationSizeMb: CHECK_THREAD_HEAP_MB } });
    // An idle thread keeps no process alive.
    thread.unref();
    thread.on('message', (answer: FromThread) => {
      const job = this.#running.get(thread);
      if (!job || job.id !== answer.id) return;
      this.#running.delete(thread);
      if (this.#idle.length < IDLE_THREADS_KEPT) this.#idle.push(thread);
      else void thread.terminate();
      job.settle('report' in answer ? { report: answer.report } : { error: new Error(`the mail checks failed: ${answer.failure}`) });
      this.#dispatch();
    });
    const lost = (why: string) => {
      const idleAt = this.#idle.indexOf(thread);
      if (idleAt !== -1) this.#idle.splice(idleAt, 1);
      const job = this.#running.get(thread);
      if (!job) return;
      this.#running.delete(thread);
      job.settle({ error: new Error(`the mail check thread ${why}`) });
      this.#dispatch();
    };
    thread.on('error', (error) => lost(`failed: ${error.stack ?? error.message}`));
    thread.on('exit', (code) => lost(`exited (${code})`));
    return thread;
  }
}

function timedOut(deadlineMs: number): Refusal {
  return new Refusal(
    503,
    'checks_timeout',
    `The checks of this message did not finish within ${formatDuration(deadlineMs)} (the server's checksTimeout) and were stopped; a busy server may need a longer timeout, and the links check waits on every link's host`,
  );
}

function stopped(): Refusal {
  return new Refusal(503, 'unavailable', 'The checks were stopped: the caller hung up or the server is closing');
}
