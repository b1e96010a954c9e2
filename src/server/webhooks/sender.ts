// The HTTP side of a delivery: the body built (once per event) and signed,
// one keep-alive undici Pool per endpoint origin, so an endpoint's events go
// out over warm connections (no TCP handshake per event), and one POST per
// attempt with its own timeout. Redirects are never followed (classify.ts).
// The server runs this in its delivery thread (thread.ts); tests of the
// dispatcher run it in their own.
import type { LookupFunction } from 'node:net';
import { Pool, type Dispatcher } from 'undici';
import { signatureHeader, WEBHOOK_HEADERS } from '../../contract/webhook-signature.js';
import type { AttemptResult } from './classify.js';
import { delivered, EXCERPT_CHARS, type DeliveryJob, type DeliveryOutcome, type DeliverySender } from './delivery-job.js';
import { BodyCache } from './event-body.js';
import { checkedLookup, DESTINATION_REFUSED } from '../../contract/destinations.js';
import { destinationPolicy } from './destination-policy.js';
import { providerSignature } from './provider-events/formats.js';

export interface PostRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Aborts the attempt (the webhook was removed, the server closes): a `cancelled` failure. */
  readonly signal: AbortSignal;
}

export interface Posted {
  readonly result: AttemptResult;
  /** From the request going out to the answer's head, or to the failure, in ms (performance.now). */
  readonly latencyMs: number;
}

/** The most of an answer's body read (and thrown away) so the connection can carry the next attempt. */
const MAX_ANSWER_BYTES = 64 * 1024;

function failureOf(error: unknown, timedOut: boolean, cancelled: boolean): AttemptResult {
  const detail = error instanceof Error ? error.message : String(error);
  if (cancelled) return { kind: 'failure', reason: 'cancelled', detail };
  if (timedOut) return { kind: 'failure', reason: 'timeout', detail };
  const codes = [(error as { code?: unknown }).code, ((error as { cause?: { code?: unknown } }).cause ?? {}).code];
  if (codes.includes(DESTINATION_REFUSED)) return { kind: 'failure', reason: 'destination', detail };
  if (codes.includes('ECONNREFUSED')) return { kind: 'failure', reason: 'refused', detail };
  if (codes.some((code) => code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')) return { kind: 'failure', reason: 'reset', detail };
  if (codes.includes('UND_ERR_HEADERS_TIMEOUT') || codes.includes('UND_ERR_BODY_TIMEOUT')) return { kind: 'failure', reason: 'timeout', detail };
  return { kind: 'failure', reason: 'network', detail };
}

/** The most webhook URLs kept parsed; past it the memo starts again. */
const MAX_PARSED_URLS = 256;

/** A pool no attempt used for this long is closed (its webhook was removed, or went quiet): a new one opens on demand. */
export const IDLE_POOL_MS = 60_000;

export class WebhookSender implements DeliverySender {
  readonly #pools = new Map<string, Pool>();
  /** Per origin: when an attempt last used its pool, and how many are in flight on it. */
  readonly #use = new Map<string, { lastUsed: number; inFlight: number }>();
  readonly #bodies = new BodyCache();
  readonly #urls = new Map<string, { readonly origin: string; readonly path: string }>();
  readonly #now: () => number;
  readonly #lookup: LookupFunction;

  /**
   * `webhookAllow`: the server's `--webhook-allow` list, checked against
   * the address each connection's name resolves to (destination-policy.ts);
   * `resolve` stands in for DNS (tests).
   */
  constructor(options: { readonly now?: () => number; readonly webhookAllow?: readonly string[]; readonly resolve?: LookupFunction } = {}) {
    this.#now = options.now ?? (() => performance.now());
    const policy = destinationPolicy(options.webhookAllow ?? []);
    this.#lookup = checkedLookup((host, address) => policy.addressRefusal(host, address), options.resolve);
  }

  /** Origins with an open pool (for tests). */
  get openPools(): readonly string[] {
    return [...this.#pools.keys()];
  }

  /** Builds (or reuses) the event's body, signs it with the job's timestamp, and posts it. */
  post(job: DeliveryJob, signal: AbortSignal): Promise<DeliveryOutcome> {
    return this.#post(job, signal, 0);
  }

  /** The jobs one after another, in order, until one does not deliver (delivery-job.ts, `postRun`). */
  async postRun(jobs: readonly DeliveryJob[], signal: AbortSignal): Promise<DeliveryOutcome[]> {
    const began = this.#now();
    const outcomes: DeliveryOutcome[] = [];
    for (const [i, job] of jobs.entries()) {
      const startedAfterMs = outcomes.length === 0 ? 0 : this.#now() - began;
      const next = jobs[i + 1];
      // While this attempt's answer is on its way, the next event's body is built (the same bytes whenever it is built).
      const prepareNext = next && (() => void this.#bodies.get(next.eventId, next.payload).catch(() => {}));
      const outcome: DeliveryOutcome = Object.assign(await this.#post(job, signal, startedAfterMs, prepareNext), { startedAfterMs });
      outcomes.push(outcome);
      if (!delivered(outcome)) break;
    }
    return outcomes;
  }

  async #post(job: DeliveryJob, signal: AbortSignal, startedAfterMs: number, whileAnswered?: () => void): Promise<DeliveryOutcome> {
    let body: string;
    try {
      body = await this.#bodies.get(job.eventId, job.payload);
    } catch (error) {
      return { result: { kind: 'failure', reason: 'network', detail: `could not build the event's body: ${String(error)}` }, latencyMs: 0, excerpt: '' };
    }
    const timestampSeconds = Math.floor((job.at + startedAfterMs) / 1000);
    // A provider-format webhook's attempt is signed as that provider signs it, with the provider's own headers.
    const signed = job.format
      ? providerSignature(job.format, job.secret, job.eventId, timestampSeconds, body)
      : { [WEBHOOK_HEADERS.signature]: signatureHeader(job.secret, timestampSeconds, body) };
    // Object.assign, not spreads: see event-body.ts on spreads in the delivery path.
    const headers = Object.assign({}, job.headers, job.payload.kind === 'json' ? job.payload.headers : undefined, signed);
    const sending = this.send({ url: job.url, body, headers, timeoutMs: job.timeoutMs, signal });
    // undici writes the request on the next turn of the loop (a setImmediate of its own): this runs after it.
    if (whileAnswered) setImmediate(whileAnswered);
    const posted = await sending;
    // Only an attempt that did not deliver can end in a dead letter: a delivered one carries no excerpt back, and its body is not kept.
    if (!delivered(posted)) return { result: posted.result, latencyMs: posted.latencyMs, excerpt: body.slice(0, EXCERPT_CHARS) };
    this.#bodies.forget(job.eventId);
    return { result: posted.result, latencyMs: posted.latencyMs, excerpt: '' };
  }

  /** A webhook's URL, parsed once (a handful of webhooks send every attempt to the same few URLs). */
  #urlOf(href: string): { readonly origin: string; readonly path: string } {
    let url = this.#urls.get(href);
    if (!url) {
      const parsed = new URL(href);
      if (this.#urls.size >= MAX_PARSED_URLS) this.#urls.clear();
      url = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      this.#urls.set(href, url);
    }
    return url;
  }

  /** Closes the pools no attempt used for IDLE_POOL_MS; asked on each attempt, costs a look at each open pool. */
  closeIdlePools(): void {
    const now = this.#now();
    for (const [origin, use] of this.#use) {
      if (use.inFlight > 0 || now - use.lastUsed < IDLE_POOL_MS) continue;
      this.#use.delete(origin);
      void this.forget(origin);
    }
  }

  #poolFor(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      // A handful of connections: an ordered endpoint uses one, an unordered one a few side by side.
      // Every connection's name is resolved through the policy's check: a name that resolves to a refused address is never connected to.
      pool = new Pool(origin, { connections: 8, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connect: { lookup: this.#lookup } });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  /**
   * One POST of a body as it is. Through undici's `dispatch` with a handler
   * of our own rather than `request`: no stream is made for the answer,
   * whose body is only counted and dropped, and one listener stands for the
   * timeout and the caller's signal. That cut the HTTP client's CPU per
   * attempt by about 40% (72 to 41 us here), CPU spent beside the SMTP intake.
   */
  send(request: PostRequest): Promise<Posted> {
    const url = this.#urlOf(request.url);
    this.closeIdlePools();
    const pool = this.#poolFor(url.origin);
    const use = this.#use.get(url.origin) ?? { lastUsed: 0, inFlight: 0 };
    this.#use.set(url.origin, use);
    use.inFlight++;
    const started = performance.now();
    return new Promise<Posted>((resolve) => {
      let controller: Dispatcher.DispatchController | undefined;
      let answer: { readonly status: number; readonly retryAfter: string | undefined; readonly latencyMs: number } | undefined;
      let answerBytes = 0;
      let timedOut = false;
      let settled = false;
      const finish = (result: AttemptResult, latencyMs: number) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        request.signal.removeEventListener('abort', cancel);
        use.inFlight--;
        use.lastUsed = this.#now();
        resolve({ result, latencyMs });
      };
      const finishAnswered = () => answer && finish({ kind: 'answer', status: answer.status, retryAfter: answer.retryAfter }, answer.latencyMs);
      // Once the answer's head came, the attempt is that answer, however its body ends.
      const end = (error: unknown) => {
        if (answer) return finishAnswered();
        finish(failureOf(error, timedOut, request.signal.aborted), performance.now() - started);
      };
      // A timeout or a cancel ends the attempt now, and the request when undici has started it.
      const stop = (error: Error) => {
        controller?.abort(error);
        end(error);
      };
      const timeout = setTimeout(() => {
        timedOut = true;
        stop(new Error(`no answer within ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      const cancel = () => stop(request.signal.reason instanceof Error ? request.signal.reason : new Error('cancelled'));
      if (request.signal.aborted) return cancel();
      request.signal.addEventListener('abort', cancel, { once: true });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(requestController) {
          controller = requestController;
          if (settled) requestController.abort(new Error('the attempt ended before it was sent'));
        },
        onResponseStart(_controller, status, headers) {
          const header = headers['retry-after'];
          answer = { status, retryAfter: Array.isArray(header) ? header[0] : header, latencyMs: performance.now() - started };
        },
        onResponseData(responseController, chunk) {
          // The answer's body is counted and dropped, so the connection can carry the next attempt; past the bound, the connection goes.
          answerBytes += chunk.length;
          if (answerBytes <= MAX_ANSWER_BYTES) return;
          responseController.abort(new Error(`the answer's body is over ${MAX_ANSWER_BYTES} bytes`));
          finishAnswered();
        },
        onResponseEnd: () => finishAnswered(),
        onResponseError: (_controller, error) => end(error),
      };
      const options: Dispatcher.DispatchOptions = {
        origin: url.origin,
        path: url.path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        headersTimeout: request.timeoutMs,
        bodyTimeout: request.timeoutMs,
      };
      try {
        pool.dispatch(options, handler);
      } catch (error) {
        end(error);
      }
    });
  }

  /** Closes one endpoint's connections (its webhook was removed and no other uses the origin). */
  async forget(origin: string): Promise<void> {
    const pool = this.#pools.get(origin);
    if (!pool) return;
    this.#pools.delete(origin);
    // Its connections are idle: closed gracefully (destroy would abort an attempt that just started on it).
    await pool.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}
