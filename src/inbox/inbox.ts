// An inbox: one address, its watermark, and the waits on it.
//
// The watermark belongs to the inbox (rule 1 of docs/CONTRACT.md, "The
// client's nine rules"): it is read once, when the inbox is created - before
// the test does whatever sends the mail - and every later wait considers
// everything above it that no earlier wait on this inbox has returned. So a
// wait that starts after the mail arrived still finds it, and two waits for
// "Your code" get the first and the second code, in arrival order, never the
// same one twice.
import type { EvictedMail } from '../client/client.js';
import type { MailBackend } from '../backends/backend.js';
import { createBackend } from '../backends/choose.js';
import { MailroomApiError, MailroomError } from '../client/errors.js';
import type { MailSummary } from '../client/messages.js';
import { MAX_LIST_LIMIT } from '../contract/limits.js';
import { assertMs, expectedError } from '../contract/validation.js';
import { longPollStrategy } from '../wait/long-poll-strategy.js';
import { listPaced, pacerKey } from '../wait/paced-list.js';
import { pacerFor } from '../wait/pacer.js';
import { pollingStrategy } from '../wait/polling-strategy.js';
import { callWithRetry } from '../wait/retry.js';
import type { InspectContext, PollOutcome, WaitStrategy } from '../wait/strategy.js';
import { MAX_GRACE_MS } from '../wait/window.js';
import { freshAddress } from '../contract/fresh-address.js';
import { CallSite } from './call-site.js';
import { Collection } from './collect.js';
import { walkToWatermark, type ListingCut } from './listing-walk.js';
import { describeWait, type WaitKind } from './describe.js';
import { formatDuration } from '../contract/format.js';
import type { InboxEvent, WaitInfo } from './events.js';
import { compileFilter, type CompiledFilter, type MailFilter } from './filter.js';
import {
  DEFAULT_QUIET_MS,
  resolveInboxOptions,
  validateWaitOptions,
  type InboxOptions,
  type QuietOptions,
  type ResolvedInboxOptions,
  type WaitOptions,
} from './inbox-options.js';
import { InboxLedger } from './ledger.js';
import { Mail } from './mail.js';
import { explainSilence, SILENCE_BUDGET_MS } from './silence.js';
import { MailTimeoutError, nothingArrived, UnexpectedMailError, type WaitFailure } from './wait-errors.js';
import { checkService } from './service-check.js';
import { createInboxSmtp, type InboxSmtp } from './smtp.js';
import { createInboxWebhooks, type InboxWebhooks } from './webhooks.js';
import { aboveWatermark, readWatermark, type Watermark } from './watermark.js';

/** Setup calls (watermark read, delete, listing) give up after this long. */
const CALL_BUDGET_MS = 10_000;
/**
 * One fetch of a match gets this many attempts, within this many request
 * timeouts, before the wait moves on to the next match (and tries it again
 * at the next check): a message whose fetch keeps failing must not hold up
 * every later match for the whole budget.
 */
const FETCH_ATTEMPTS = 3;
const FETCH_BUDGET_REQUESTS = 3;
/** Less time than this to read why nothing arrived is not worth a request. */
const MIN_SILENCE_BUDGET_MS = 20;

/** What ends a wait early: the caller's signal and the inbox's cut-off, and when the cut-off is due (on the inbox's clock). */
interface WaitStop {
  readonly signal: AbortSignal | undefined;
  readonly cutAt: number | undefined;
  /** The caller's own signal: once it fired, the caller has given up on the wait. */
  readonly callerSignal: AbortSignal | undefined;
  /** How long the runner waits past the cut-off (`WaitCut.spareMs`). */
  readonly spareMs: number | undefined;
}

interface InboxState {
  readonly options: ResolvedInboxOptions;
  readonly address: string;
  readonly client: MailBackend;
  readonly watermark: Watermark | null;
  /** Wall time, only to tell the server's records of this test's time from older ones (silence.ts); no deadline reads it. */
  readonly createdAt: Date;
}

const CONSTRUCT = Symbol('Inbox');

/**
 * Creates an inbox on a fresh address (or the given one) with its watermark
 * known before resolving, so whatever the test does next counts as new. A
 * fresh address's watermark is "nothing yet" by construction; a given
 * address's is read from the service.
 */
export async function createInbox(options: InboxOptions = {}): Promise<Inbox> {
  if (options === null || typeof options !== 'object') throw new TypeError('Expected inbox options to be an object');
  const resolved = resolveInboxOptions(options as InboxOptions & Record<string, unknown>);
  const createdAt = new Date();
  const minted = resolved.address === undefined;
  const address = resolved.address ?? freshAddress({ prefix: resolved.prefix, domain: resolved.domain });
  const client =
    resolved.client ??
    sharedBackend({
      backend: resolved.backend,
      apiURL: resolved.apiURL,
      token: resolved.token,
      credentials: resolved.credentials,
      requestTimeout: resolved.requestTimeout,
    });
  // Discovery runs beside setup, so the first wait does not pay for it.
  const discovery = resolved.serverWait ? client.features({ signal: options.signal }) : undefined;

  const { clock, requestTimeout } = resolved;
  const setupCall = { clock, requestTimeout, hardStop: clock.now() + Math.min(resolved.timeout || CALL_BUDGET_MS, CALL_BUDGET_MS), signal: options.signal };
  let watermark: Watermark | null;
  if (resolved.watermark !== undefined) {
    watermark = resolved.watermark === null ? null : { id: resolved.watermark, receivedAt: undefined };
  } else if (minted) {
    // No list call: the address's first list call a second is left to the
    // first wait, whose first look is then immediate (service-check.ts).
    // Setup is then one round trip, and discovery may as well finish in it.
    await Promise.all([checkService(client, address, setupCall), discovery]);
    watermark = null;
  } else {
    // The read is a list call and goes through the address's pacer like
    // every other one, so the first check of a wait right after this waits
    // out the floor instead of earning a 429.
    watermark = await readWatermark(client, address, setupCall);
  }
  return new Inbox(CONSTRUCT, { options: resolved, address, client, watermark, createdAt });
}

/**
 * One driver per catcher, web address and credentials in this process: its
 * push stream is opened once and heard by every inbox's waits. The embedded
 * server's client stays one per inbox, as it always was.
 */
const catchers = new Map<string, MailBackend>();

function sharedBackend(options: Parameters<typeof createBackend>[0]): MailBackend {
  if (options.backend === 'mailroom') return createBackend(options);
  const key = JSON.stringify([options.backend, String(options.apiURL), options.credentials ?? null, options.token ?? null, options.requestTimeout]);
  let backend = catchers.get(key);
  if (!backend) catchers.set(key, (backend = createBackend(options)));
  return backend;
}

/**
 * One mailbox and the waits on it: made by `createInbox()`, or by the
 * `inbox` fixture of `mailroomjs/playwright` and `mailroomjs/vitest`.
 */
export class Inbox {
  /** The mailbox: send mail here. */
  readonly address: string;
  /** The backend the mail is read from: mailroom's client, or a catcher's driver (docs/backends.md). */
  readonly client: MailBackend;
  /**
   * The SMTP deferral lab for this address (the embedded server's rules and
   * attempt log): `await inbox.smtp.greylist({ minDelay: 2_000 })`, then
   * `await inbox.smtp.attempts()`.
   */
  readonly smtp: InboxSmtp;
  /**
   * Webhooks scoped to this address (the embedded server's): `const hook =
   * await inbox.webhooks.add({ url, retry: { maxAttempts: 5, initialDelayMs: 200 } })`,
   * then `await hook.deliveries()`; removed at the test's teardown.
   */
  readonly webhooks: InboxWebhooks;
  readonly #options: ResolvedInboxOptions;
  readonly #watermark: Watermark | null;
  readonly #createdAt: Date;
  readonly #ledger: InboxLedger;
  /** The latest listing, newest first: a wait may answer from it at once. */
  #snapshot: readonly MailSummary[] | undefined;
  /** Set when the latest listing stopped short of the watermark (listing-walk.ts). */
  #listingCut: ListingCut | undefined;
  /** What the last listing said the service's message cap evicted from this mailbox. */
  #evicted: EvictedMail | undefined;
  #waits = 0;

  /** @internal Use `createInbox()`. */
  constructor(token: typeof CONSTRUCT, state: InboxState) {
    if (token !== CONSTRUCT) throw new TypeError('Use `await createInbox(options)` to make an Inbox');
    this.address = state.address;
    this.client = state.client;
    this.#options = state.options;
    this.#watermark = state.watermark;
    this.#createdAt = state.createdAt;
    this.#ledger = new InboxLedger(state.address, state.options.handled);
    this.smtp = createInboxSmtp({
      address: state.address,
      client: state.client,
      clock: state.options.clock,
      requestTimeout: state.options.requestTimeout,
      stopFor: (signal) => this.#stopFor(signal).signal,
    });
    this.webhooks = createInboxWebhooks({
      address: state.address,
      client: state.client,
      clock: state.options.clock,
      requestTimeout: state.options.requestTimeout,
      timeout: state.options.timeout,
      stopFor: (signal) => this.#stopFor(signal).signal,
    });
  }

  /** The id of the newest message when the inbox was created, or null. */
  get watermark(): string | null {
    return this.#watermark?.id ?? null;
  }

  /** The default budget of `expectMail`, in ms. */
  get timeout(): number {
    return this.#options.timeout;
  }

  // Each wait takes its caller's frames first thing (call-site.ts): its
  // failure points at the test's line, not at the polling loop.

  /** Waits for the oldest new mail matching `filter`, fetches it, and returns it. */
  async expectMail(filter?: MailFilter, options: WaitOptions = {}): Promise<Mail> {
    const site = CallSite.capture();
    const [mail] = await site.run(() => this.#expect('expectMail', 1, filter, options, site));
    return mail as Mail;
  }

  /** Waits for `count` new mails matching `filter`; returns them in arrival order. */
  async expectMails(count: number, filter?: MailFilter, options: WaitOptions = {}): Promise<Mail[]> {
    const site = CallSite.capture();
    return site.run(async () => {
      if (!Number.isInteger(count) || count < 1 || count > MAX_LIST_LIMIT) {
        throw expectedError('count', `an integer from 1 to ${MAX_LIST_LIMIT}`, count);
      }
      return this.#expect('expectMails', count, filter, options, site);
    });
  }

  /**
   * Resolves when no new mail matching `filter` arrived during a quiet
   * period of `within` ms (a true quiet period: the mailbox is looked at
   * when it ends, not only when it starts). Mail returned by an earlier
   * wait does not count.
   */
  async expectNoMail(filter?: MailFilter, options: QuietOptions = {}): Promise<void> {
    const site = CallSite.capture();
    return site.run(() => this.#expectQuiet(filter, options, site));
  }

  /** The mail that arrived since the inbox was created, oldest first (one list call). */
  async messages(options: { signal?: AbortSignal } = {}): Promise<MailSummary[]> {
    const { clock, requestTimeout } = this.#options;
    const listing = await listPaced(this.client, this.address, {
      limit: MAX_LIST_LIMIT,
      clock,
      requestTimeout,
      hardStop: clock.now() + CALL_BUDGET_MS,
      signal: options.signal,
      extend: (first, until) => this.#walk(first, until, options.signal),
    });
    this.#snapshot = listing;
    return aboveWatermark(listing, this.#watermark).reverse();
  }

  /**
   * Deletes the whole mailbox; idempotent (a 404 counts as done). Returns how
   * many went. `timeout`: give up after this many ms, retries included (10 s).
   */
  async delete(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<number> {
    const budget = options.timeout ?? CALL_BUDGET_MS;
    assertMs('timeout', budget);
    this.#snapshot = undefined;
    return this.#retry(
      async (timeout) => {
        try {
          return await this.client.deleteMailbox(this.address, { timeout, signal: options.signal });
        } catch (error) {
          if (error instanceof MailroomApiError && error.status === 404) return 0;
          throw error;
        }
      },
      options.signal,
      budget,
    );
  }

  /** Deletes one message - after acting on it, not before. Idempotent; false if it was already gone. */
  async deleteMessage(message: string | { readonly id: string }, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const id = typeof message === 'string' ? message : message?.id;
    if (typeof id !== 'string' || id === '') throw new TypeError('Expected a message id or a Mail');
    this.#ledger.markGone(id);
    return this.#retry(async (timeout) => {
      try {
        return await this.client.deleteMessage(this.address, id, { timeout, signal: options.signal });
      } catch (error) {
        if (error instanceof MailroomApiError && error.status === 404) return false;
        throw error;
      }
    }, options.signal);
  }

  toJSON(): { address: string; watermark: string | null } {
    return { address: this.address, watermark: this.watermark };
  }

  #expectQuiet(filter: MailFilter | undefined, options: QuietOptions, site: CallSite): Promise<void> {
    validateWaitOptions(options, 'within');
    const compiled = compileFilter(filter);
    const within = options.within ?? DEFAULT_QUIET_MS;
    assertMs('within', within);
    const info = this.#waitInfo('expectNoMail', 0, compiled, within, site);
    return this.#around(info, site, async () => {
      const { clock } = this.#options;
      const startedAt = clock.now();
      this.#emit({ type: 'wait-start', wait: info });
      try {
        const outcome = await this.#poll(info, 'quiet', within, this.#stopFor(options.signal), async (messages) => {
          const hits = aboveWatermark(messages, this.#watermark).filter((s) => this.#ledger.skipReason(s.id) === undefined && compiled.matches(s));
          return hits.length > 0 ? hits.reverse() : undefined;
        });
        if (outcome.result) {
          throw new UnexpectedMailError({
            address: this.address,
            filter: compiled.description,
            withinMs: within,
            elapsedMs: outcome.elapsedMs,
            arrived: outcome.result,
          });
        }
        // A listing cut short of the watermark left older mail unseen: no quiet to confirm.
        if (outcome.cutShort || !outcome.coveredDeadline || this.#listingCut) throw this.#unconfirmedQuiet(compiled, within, outcome);
        this.#emit({ type: 'wait-end', wait: info, outcome: 'quiet', elapsedMs: clock.now() - startedAt, checks: outcome.checks });
      } catch (error) {
        this.#emit({ type: 'wait-end', wait: info, outcome: 'failed', error: error as Error, elapsedMs: clock.now() - startedAt });
        throw error;
      }
    });
  }

  async #expect(kind: WaitKind, count: number, filter: MailFilter | undefined, options: WaitOptions, site: CallSite): Promise<Mail[]> {
    validateWaitOptions(options, 'timeout');
    const compiled = compileFilter(filter);
    const budgetMs = options.timeout ?? this.#options.timeout;
    assertMs('timeout', budgetMs);
    const info = this.#waitInfo(kind, count, compiled, budgetMs, site);
    return this.#around(info, site, () => this.#collect(info, compiled, this.#stopFor(options.signal)));
  }

  async #collect(info: WaitInfo, filter: CompiledFilter, stop: WaitStop): Promise<Mail[]> {
    const { clock, requestTimeout } = this.#options;
    const { signal } = stop;
    const startedAt = clock.now();
    this.#emit({ type: 'wait-start', wait: info });
    const collection = new Collection({
      address: this.address,
      count: info.count,
      filter,
      ledger: this.#ledger,
      aboveWatermark: (messages) => aboveWatermark(messages, this.#watermark),
      fetch: (summary, hardStop) => this.#fetch(summary.id, hardStop, signal),
      listingCut: () => this.#listingCut,
      signal,
    });
    try {
      // A listing this inbox already holds may answer at once: whatever it
      // lists exists (or 404s, and is skipped), and anything not in it
      // arrived later, so the oldest match in it is the right answer. Only
      // when it has none does the wait ask the service.
      const hardStop = startedAt + info.budgetMs + Math.min(requestTimeout, MAX_GRACE_MS);
      const early = this.#snapshot ? await collection.inspect(this.#snapshot, { hardStop, incomplete: () => {} }) : undefined;
      if (early) return this.#received(info, early, startedAt, 0);
      const outcome = await this.#poll(info, 'until-found', Math.max(0, info.budgetMs - (clock.now() - startedAt)), stop, collection.inspect, collection.watch);
      if (outcome.result) return this.#received(info, outcome.result, startedAt, outcome.checks);
      const failure = collection.failure(outcome, info.budgetMs, clock.now() - startedAt, this.#evictedAboveWatermark());
      throw new MailTimeoutError({ ...failure, diagnosis: await this.#diagnose(failure, filter, stop, hardStop) });
    } catch (error) {
      this.#emit({ type: 'wait-end', wait: info, outcome: 'failed', error: error as Error, elapsedMs: clock.now() - startedAt });
      throw error;
    } finally {
      collection.release();
    }
  }

  /**
   * Why nothing arrived (silence.ts), when nothing did and there is time to
   * ask: at most `SILENCE_BUDGET_MS`, and no later than the wait's own hard
   * stop (so a failed wait still ends within its deadline plus one request
   * timeout); once the test's deadline cut the wait, at most half of what
   * the runner allows past the cut.
   */
  async #diagnose(failure: WaitFailure, filter: CompiledFilter, stop: WaitStop, hardStop: number): Promise<string | undefined> {
    if (!nothingArrived(failure) || stop.callerSignal?.aborted) return undefined;
    const { clock } = this.#options;
    let budgetMs = Math.min(SILENCE_BUDGET_MS, hardStop - clock.now());
    if (stop.cutAt !== undefined) budgetMs = Math.min(budgetMs, stop.cutAt - clock.now() + (stop.spareMs ?? 0) / 2);
    else if (stop.signal?.aborted) budgetMs = 0;
    // No time left to ask (a loaded machine, a test's timeout close behind the cut): said, so the reader knows it was not looked at.
    if (budgetMs < MIN_SILENCE_BUDGET_MS)
      return "Why is unknown: the server's attempt log could not be read in time (no time was left before the test's own timeout).";
    return explainSilence({ backend: this.client, address: this.address, since: this.#createdAt, filter, budgetMs });
  }

  /** Evicted mail newer than the watermark (the embedded server's ids sort by arrival), as a failure names it. */
  #evictedAboveWatermark(): EvictedMail | undefined {
    const evicted = this.#evicted;
    if (!evicted) return undefined;
    return this.#watermark === null || evicted.newestId > this.#watermark.id ? evicted : undefined;
  }

  #received(info: WaitInfo, mails: readonly Mail[], startedAt: number, checks: number): Mail[] {
    for (const mail of mails) this.#ledger.markReturned(mail.id);
    this.#emit({ type: 'wait-end', wait: info, outcome: 'received', mails, elapsedMs: this.#options.clock.now() - startedAt, checks });
    return [...mails];
  }

  async #fetch(id: string, hardStop: number, signal: AbortSignal | undefined): Promise<Mail> {
    const { clock, requestTimeout } = this.#options;
    const fetchStop = Math.min(hardStop, clock.now() + FETCH_BUDGET_REQUESTS * requestTimeout);
    const detail = await callWithRetry((timeout) => this.client.getMessage(this.address, id, { timeout, signal }), {
      clock,
      hardStop: fetchStop,
      requestTimeout,
      signal,
      attempts: FETCH_ATTEMPTS,
    });
    return new Mail(this.address, detail, (rawSignal) =>
      this.#retry((timeout) => this.client.getRawMessage(this.address, id, { timeout, signal: rawSignal }), rawSignal),
    );
  }

  async #poll<T>(
    info: WaitInfo,
    mode: 'until-found' | 'quiet',
    budgetMs: number,
    { signal, cutAt }: WaitStop,
    inspect: (messages: readonly MailSummary[], context: InspectContext) => Promise<T | undefined>,
    watchPassedOver?: (wake: () => void) => () => void,
  ): Promise<PollOutcome<T>> {
    const { clock, random, requestTimeout } = this.#options;
    const askedAt = clock.now();
    const strategy = await this.#strategy(signal);
    return strategy.poll({
      mode,
      // Discovery is cached and started with the inbox; should it still be
      // running, its time comes out of this wait's budget.
      budgetMs: Math.max(0, budgetMs - (clock.now() - askedAt)),
      clock,
      random,
      requestTimeout,
      signal,
      cutAt,
      pacer: () => pacerFor(clock, pacerKey(this.client, this.address)),
      list: async (timeout, listSignal) => {
        const until = clock.now() + timeout;
        const listing = await this.client.listMessages(this.address, { limit: MAX_LIST_LIMIT, timeout, signal: listSignal });
        this.#evicted = listing.evicted;
        return (this.#snapshot = await this.#walk(listing.messages, until, listSignal));
      },
      inspect,
      watchPassedOver,
      onEvent: this.#options.onEvent ? (event) => this.#emit({ ...event, wait: info }) : undefined,
    });
  }

  /** The long-poll when the service advertises one (and `serverWait` allows it), else the polling loop. */
  async #strategy(signal: AbortSignal | undefined): Promise<WaitStrategy> {
    if (!this.#options.serverWait) return pollingStrategy;
    const { wait: path } = await this.client.features({ timeout: this.#options.requestTimeout, signal });
    if (path === undefined) return pollingStrategy;
    return longPollStrategy({
      sinceId: this.#watermark?.id,
      hold: async (sinceId, holdMs, holdSignal, timeout, lookDelayMs) => {
        const until = this.#options.clock.now() + timeout;
        const listing = await this.client.waitForMail(this.address, {
          path,
          sinceId,
          holdMs,
          limit: MAX_LIST_LIMIT,
          timeout,
          signal: holdSignal,
          lookDelayMs,
        });
        // The service counted the answer as a list call: known to the pacer
        // before any page of the walk, not only once the strategy has it.
        pacerFor(this.#options.clock, pacerKey(this.client, this.address)).note();
        this.#evicted = listing.evicted;
        const messages = (this.#snapshot = await this.#walk(listing.messages, until, holdSignal));
        return { messages, timedOut: listing.timedOut };
      },
    });
  }

  /**
   * A listing walked down to the watermark, page by page where the service
   * pages (listing-walk.ts); remembers whether it stopped short, for a
   * failure's text. The pages share the list call's timeout (`until`).
   */
  async #walk(first: readonly MailSummary[], until: number, signal: AbortSignal | undefined): Promise<readonly MailSummary[]> {
    const { clock } = this.#options;
    const walked = await walkToWatermark(first, {
      limit: MAX_LIST_LIMIT,
      mark: this.#watermark,
      paging: async () => (await this.client.features({ signal })).paging,
      page: async (beforeId) =>
        (await this.client.listMessages(this.address, { limit: MAX_LIST_LIMIT, beforeId, timeout: Math.max(1, until - clock.now()), signal })).messages,
    });
    this.#listingCut = walked.cut;
    return walked.messages;
  }

  #unconfirmedQuiet(filter: CompiledFilter, within: number, outcome: PollOutcome<unknown>): MailroomError {
    const cut = this.#listingCut;
    const why = outcome.cutShort
      ? `the wait was cut short after ${formatDuration(outcome.elapsedMs)}${outcome.cutShortReason ? ` (${outcome.cutShortReason})` : ''}`
      : !outcome.coveredDeadline
        ? `no check got an answer at the end of the period${outcome.lastError ? `; the last failure: ${outcome.lastError.message}` : ''}`
        : cut && !cut.paging
          ? `the listing was full (${cut.listed} messages, the most the service lists at once) without reaching the watermark, and the service offers no paging, so older mail was not looked at`
          : `the listing stopped at ${cut?.listed ?? 0} messages, still above the watermark (the walk down its pages was cut off), so older mail was not looked at`;
    const matching = filter.isEmpty ? '' : ` matching ${filter.description}`;
    return new MailroomError(
      `Could not confirm that no mail${matching} arrived at ${this.address} for ${formatDuration(within)}: ${why} (${outcome.checks} ${outcome.checks === 1 ? 'check' : 'checks'}).`,
      {
        slug: 'quiet_unconfirmed',
        address: this.address,
        cause: outcome.lastError,
      },
    );
  }

  #retry<T>(call: (timeout: number) => Promise<T>, signal: AbortSignal | undefined, budgetMs = CALL_BUDGET_MS): Promise<T> {
    const { clock, requestTimeout } = this.#options;
    return callWithRetry(call, { clock, hardStop: clock.now() + budgetMs, requestTimeout, signal });
  }

  #waitInfo(kind: WaitKind, count: number, filter: CompiledFilter, budgetMs: number, site: CallSite): WaitInfo {
    return Object.freeze({
      id: ++this.#waits,
      kind,
      title: describeWait(this.address, filter.description, { kind, count, within: budgetMs }),
      address: this.address,
      filter: filter.description,
      filterSpec: filter.source,
      budgetMs,
      count,
      // Read only by a report step that asks (formatting the frames is the cost).
      get calledFrom() {
        return site.location;
      },
    });
  }

  /** The caller's signal combined with the inbox's own cut-off, if any, and when that cut-off fires. */
  #stopFor(signal: AbortSignal | undefined): WaitStop {
    const asked = this.#options.waitSignal?.();
    if (!asked) return { signal, cutAt: undefined, callerSignal: signal, spareMs: undefined };
    const cut = asked instanceof AbortSignal ? { signal: asked, firesInMs: undefined, spareMs: undefined } : asked;
    const cutAt = cut.firesInMs === undefined ? undefined : this.#options.clock.now() + cut.firesInMs;
    return { signal: signal ? AbortSignal.any([signal, cut.signal]) : cut.signal, cutAt, callerSignal: signal, spareMs: cut.spareMs };
  }

  /** Runs a wait in the `aroundWait` step, its failure pointed at the caller before the step sees it. */
  #around<T>(info: WaitInfo, site: CallSite, run: () => Promise<T>): Promise<T> {
    const pointed = () => site.run(run);
    return this.#options.aroundWait ? this.#options.aroundWait(info, pointed) : pointed();
  }

  #emit(event: InboxEvent): void {
    this.#options.onEvent?.(Object.freeze(event));
  }
}

/** True for an `Inbox` made by this copy of mailroom. */
export function isInbox(value: unknown): value is Inbox {
  return value instanceof Inbox;
}
