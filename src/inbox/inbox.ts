// An inbox: one address, its watermark, and the waits on it.
//
// The watermark belongs to the inbox (rule 1): it is read once, when the
// inbox is created - before the test does whatever sends the mail - and
// every later wait considers everything above it that no earlier wait on
// this inbox has returned. So a wait that starts after the mail arrived
// still finds it, and two waits for "Your code" get the first and the
// second code, in arrival order, never the same one twice.
import { freshAddress } from './address.js';
import { MailroomClient, type CallOptions } from '../client/client.js';
import { MAX_LIST_LIMIT } from '../contract/limits.js';
import { describeWait, type WaitKind } from './describe.js';
import { MailroomApiError, MailroomError, isTransient } from '../client/errors.js';
import { MailTimeoutError, UnexpectedMailError, type SkippedMail, type SkipReason } from './wait-errors.js';
import { compileFilter, type CompiledFilter, type MailFilter } from './filter.js';
import { Mail } from './mail.js';
import { DEFAULT_QUIET_MS, resolveInboxOptions, type ConnectionOptions, type ResolvedInboxOptions } from './inbox-options.js';
import { assertMs } from '../contract/validation.js';
import { pacerFor, TOO_LATE } from '../wait/pacer.js';
import { callWithRetry } from '../wait/retry.js';
import { type MailSummary } from '../client/messages.js';
import { formatDuration } from './describe.js';
import { longPollStrategy } from '../wait/long-poll-strategy.js';
import { pollingStrategy } from '../wait/polling-strategy.js';
import { MAX_GRACE_MS } from '../wait/window.js';
import { type InspectContext, type PollEvent, type PollOutcome, type WaitStrategy } from '../wait/strategy.js';
import type { Clock, RandomSource } from '../wait/clock.js';
import type { HandledStore } from './handled.js';

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

export interface InboxOptions extends ConnectionOptions {
  /** Use this address instead of a fresh one. */
  readonly address?: string | undefined;
  /** Readable start of a fresh address, e.g. the test's title. */
  readonly prefix?: string | undefined;
  /** Default budget of `expectMail`/`expectMails`, in ms (30 s). */
  readonly timeout?: number | undefined;
  /**
   * Skip the watermark read: a message id to count from, or `null` to count
   * every message already in the mailbox as new (for consumers draining a
   * mailbox with a `handled` store). Omit it to read the watermark now.
   */
  readonly watermark?: string | null | undefined;
  /** Share one client (and its connection pool) between inboxes. */
  readonly client?: MailroomClient | undefined;
  /**
   * Let the service hold the wait (its long-poll) when it advertises one,
   * instead of polling: mail is seen the moment it arrives. Falls back to
   * polling on its own when the service has none, is full, or fails.
   * Default: `MAILROOM_SERVER_WAIT` (`0`/`false` turns it off), else true.
   */
  readonly serverWait?: boolean | undefined;
  /** Remember handled ids beyond this inbox, e.g. `openHandledStore(path)`. */
  readonly handled?: HandledStore | undefined;
  /** Observes every wait: start, each check, refusals, failures, the end. */
  readonly onEvent?: ((event: InboxEvent) => void) | undefined;
  /**
   * Wraps every wait, e.g. in a report step:
   * `aroundWait: (wait, run) => test.step(wait.title, run, { box: true })`.
   */
  readonly aroundWait?: (<T>(wait: WaitInfo, run: () => Promise<T>) => Promise<T>) | undefined;
  /** Cancels the watermark read of `createInbox`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Asked at the start of every wait: a signal that ends it early with its
   * own failure text. Runner plugins pass one that fires shortly before the
   * test's own deadline, so a wait never dies of the runner's generic timeout.
   */
  readonly waitSignal?: (() => AbortSignal | undefined) | undefined;
  /** A monotonic clock; only tests replace it. */
  readonly clock?: Clock | undefined;
  /** A random source in [0, 1); only tests replace it. */
  readonly random?: RandomSource | undefined;
}

export interface WaitOptions {
  /** Budget in ms; the inbox's `timeout` (default 30 s) when omitted. */
  readonly timeout?: number | undefined;
  /** Ends the wait early (e.g. at the test's own deadline) with the same failure text. */
  readonly signal?: AbortSignal | undefined;
}

export interface QuietOptions {
  /** The quiet period in ms (default 5 s). */
  readonly within?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What a wait is, for observers and report steps. */
export interface WaitInfo {
  /** Increases with every wait on this inbox. */
  readonly id: number;
  readonly kind: WaitKind;
  /** `Wait for mail to a@mailroom.test with subject ~ "Confirm"` */
  readonly title: string;
  readonly address: string;
  /** The filter in words; `any mail` when empty. */
  readonly filter: string;
  readonly filterSpec: Readonly<MailFilter>;
  /** The budget (`expectMail`) or quiet period (`expectNoMail`), in ms. */
  readonly budgetMs: number;
  /** How many mails the wait wants (0 for `expectNoMail`). */
  readonly count: number;
}

export type InboxEvent =
  | { readonly type: 'wait-start'; readonly wait: WaitInfo }
  | (PollEvent & { readonly wait: WaitInfo })
  | { readonly type: 'wait-end'; readonly wait: WaitInfo; readonly outcome: 'received'; readonly mails: readonly Mail[]; readonly elapsedMs: number; readonly checks: number }
  | { readonly type: 'wait-end'; readonly wait: WaitInfo; readonly outcome: 'quiet'; readonly elapsedMs: number; readonly checks: number }
  | { readonly type: 'wait-end'; readonly wait: WaitInfo; readonly outcome: 'failed'; readonly error: Error; readonly elapsedMs: number };

interface Watermark {
  readonly id: string;
  /** When the watermark message arrived: the fallback cut if it disappears. */
  readonly receivedAt: Date | undefined;
}

interface InboxState {
  readonly options: ResolvedInboxOptions;
  readonly address: string;
  readonly client: MailroomClient;
  readonly watermark: Watermark | null;
  readonly onEvent: InboxOptions['onEvent'];
  readonly aroundWait: InboxOptions['aroundWait'];
  readonly waitSignal: InboxOptions['waitSignal'];
}

const CONSTRUCT = Symbol('Inbox');

/**
 * Creates an inbox on a fresh address (or the given one) and reads its
 * watermark before resolving, so whatever the test does next counts as new.
 */
export async function createInbox(options: InboxOptions = {}): Promise<Inbox> {
  if (options === null || typeof options !== 'object') throw new TypeError('Expected inbox options to be an object');
  const resolved = resolveInboxOptions(options as InboxOptions & Record<string, unknown>);
  for (const hook of ['onEvent', 'aroundWait', 'waitSignal'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') throw new TypeError(`Expected \`${hook}\` to be a function`);
  }
  const address = resolved.address ?? freshAddress({ prefix: resolved.prefix, domain: resolved.domain });
  const client =
    resolved.client ?? new MailroomClient({ apiURL: resolved.apiURL, token: resolved.token, requestTimeout: resolved.requestTimeout });
  // Discovery runs beside the watermark read, so the first wait does not pay for it.
  if (resolved.serverWait) void client.features({ signal: options.signal });

  let watermark: Watermark | null;
  if (resolved.watermark !== undefined) {
    watermark = resolved.watermark === null ? null : { id: resolved.watermark, receivedAt: undefined };
  } else {
    // Rule 1: the newest message now, or nothing. The read is a list call
    // and goes through the address's pacer like every other one, so the
    // first check of a wait right after this waits out the floor instead of
    // earning a 429.
    let newest: readonly MailSummary[];
    try {
      newest = await listPaced(client, resolved, address, 1, resolved.clock.now() + Math.min(resolved.timeout || CALL_BUDGET_MS, CALL_BUDGET_MS), options.signal);
    } catch (error) {
      throw watermarkFailure(error, address, client.apiURL);
    }
    const top = newest[0];
    watermark = top ? { id: top.id, receivedAt: top.receivedAt } : null;
  }
  return new Inbox(CONSTRUCT, { options: resolved, address, client, watermark, onEvent: options.onEvent, aroundWait: options.aroundWait, waitSignal: options.waitSignal });
}

export class Inbox {
  /** The mailbox: send mail here. */
  readonly address: string;
  readonly client: MailroomClient;
  readonly #options: ResolvedInboxOptions;
  readonly #watermark: Watermark | null;
  readonly #onEvent: InboxOptions['onEvent'];
  readonly #aroundWait: InboxOptions['aroundWait'];
  readonly #waitSignal: InboxOptions['waitSignal'];
  /** Returned by a wait on this inbox: never returned again. */
  readonly #consumed = new Set<string>();
  /** Being fetched by a running wait: concurrent waits skip them. */
  readonly #claimed = new Set<string>();
  /** Deleted or expired between listing and fetching. */
  readonly #gone = new Set<string>();
  /** The latest listing, newest first: a wait may answer from it at once. */
  #snapshot: readonly MailSummary[] | undefined;
  #waits = 0;

  /** @internal Use `createInbox()`. */
  constructor(token: typeof CONSTRUCT, state: InboxState) {
    if (token !== CONSTRUCT) throw new TypeError('Use `await createInbox(options)` to make an Inbox');
    this.address = state.address;
    this.client = state.client;
    this.#options = state.options;
    this.#watermark = state.watermark;
    this.#onEvent = state.onEvent;
    this.#aroundWait = state.aroundWait;
    this.#waitSignal = state.waitSignal;
  }

  /** The id of the newest message when the inbox was created, or null. */
  get watermark(): string | null {
    return this.#watermark?.id ?? null;
  }

  /** The default budget of `expectMail`, in ms. */
  get timeout(): number {
    return this.#options.timeout;
  }

  /** Waits for the oldest new mail matching `filter`, fetches it, and returns it. */
  async expectMail(filter?: MailFilter, options: WaitOptions = {}): Promise<Mail> {
    const [mail] = await this.#expect('expectMail', 1, filter, options);
    return mail as Mail;
  }

  /** Waits for `count` new mails matching `filter`; returns them in arrival order. */
  async expectMails(count: number, filter?: MailFilter, options: WaitOptions = {}): Promise<Mail[]> {
    if (!Number.isInteger(count) || count < 1 || count > MAX_LIST_LIMIT) {
      throw new TypeError(`Expected \`count\` to be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(count)}`);
    }
    return this.#expect('expectMails', count, filter, options);
  }

  /**
   * Resolves when no new mail matching `filter` arrived during a quiet
   * period of `within` ms (a true quiet period: the mailbox is looked at
   * when it ends, not only when it starts). Mail returned by an earlier
   * wait does not count.
   */
  async expectNoMail(filter?: MailFilter, options: QuietOptions = {}): Promise<void> {
    validateWaitOptions(options, 'within');
    const compiled = compileFilter(filter);
    const within = options.within ?? DEFAULT_QUIET_MS;
    assertMs('within', within);
    const info = this.#waitInfo('expectNoMail', 0, compiled, within);
    return this.#around(info, async () => {
      const { clock } = this.#options;
      const startedAt = clock.now();
      this.#emit({ type: 'wait-start', wait: info });
      try {
        const outcome = await this.#poll(info, 'quiet', within, this.#signalFor(options.signal), async (messages) => {
          const hits = this.#fresh(messages).filter((s) => this.#skipReason(s.id) === undefined && compiled.matches(s));
          return hits.length > 0 ? hits.reverse() : undefined;
        });
        if (outcome.result) {
          throw new UnexpectedMailError({ address: this.address, filter: compiled.description, withinMs: within, elapsedMs: outcome.elapsedMs, arrived: outcome.result });
        }
        if (outcome.cutShort || !outcome.coveredDeadline) {
          const why = outcome.cutShort
            ? `the wait was cut short after ${formatDuration(outcome.elapsedMs)}${outcome.cutShortReason ? ` (${outcome.cutShortReason})` : ''}`
            : `no check got an answer at the end of the period${outcome.lastError ? `; the last failure: ${outcome.lastError.message}` : ''}`;
          const matching = compiled.isEmpty ? '' : ` matching ${compiled.description}`;
          throw new MailroomError(`Could not confirm that no mail${matching} arrived at ${this.address} for ${formatDuration(within)}: ${why} (${outcome.checks} checks).`, {
            slug: 'quiet_unconfirmed',
            address: this.address,
            cause: outcome.lastError,
          });
        }
        this.#emit({ type: 'wait-end', wait: info, outcome: 'quiet', elapsedMs: clock.now() - startedAt, checks: outcome.checks });
      } catch (error) {
        this.#emit({ type: 'wait-end', wait: info, outcome: 'failed', error: error as Error, elapsedMs: clock.now() - startedAt });
        throw error;
      }
    });
  }

  /** The mail that arrived since the inbox was created, oldest first (one list call). */
  async messages(options: { signal?: AbortSignal } = {}): Promise<MailSummary[]> {
    const listing = await listPaced(this.client, this.#options, this.address, MAX_LIST_LIMIT, this.#options.clock.now() + CALL_BUDGET_MS, options.signal);
    this.#snapshot = listing;
    return this.#fresh(listing).reverse();
  }

  /**
   * Deletes the whole mailbox; idempotent (a 404 counts as done). Returns how
   * many went. `timeout`: give up after this many ms, retries included (10 s).
   */
  async delete(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<number> {
    const budget = options.timeout ?? CALL_BUDGET_MS;
    assertMs('timeout', budget);
    this.#snapshot = undefined;
    return this.#retry(async (timeout) => {
      try {
        return await this.client.deleteMailbox(this.address, { timeout, signal: options.signal });
      } catch (error) {
        if (error instanceof MailroomApiError && error.status === 404) return 0;
        throw error;
      }
    }, options.signal, budget);
  }

  /** Deletes one message - after acting on it, not before. Idempotent; false if it was already gone. */
  async deleteMessage(message: string | { readonly id: string }, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const id = typeof message === 'string' ? message : message?.id;
    if (typeof id !== 'string' || id === '') throw new TypeError('Expected a message id or a Mail');
    this.#gone.add(id);
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

  async #expect(kind: WaitKind, count: number, filter: MailFilter | undefined, options: WaitOptions): Promise<Mail[]> {
    validateWaitOptions(options, 'timeout');
    const compiled = compileFilter(filter);
    const budgetMs = options.timeout ?? this.#options.timeout;
    assertMs('timeout', budgetMs);
    const info = this.#waitInfo(kind, count, compiled, budgetMs);
    return this.#around(info, () => this.#collect(info, compiled, this.#signalFor(options.signal)));
  }

  async #collect(info: WaitInfo, filter: CompiledFilter, signal: AbortSignal | undefined): Promise<Mail[]> {
    const { clock, requestTimeout } = this.#options;
    const startedAt = clock.now();
    this.#emit({ type: 'wait-start', wait: info });
    const rejected = new Map<string, MailSummary>();
    const unfetched = new Map<string, MailSummary>();
    // Mail above the watermark passed over without a look at its subject:
    // a failure names it and why, so it never says "nothing arrived" (rule 9).
    const skipped = new Map<string, SkippedMail>();
    const skip = (summary: MailSummary, reason: SkipReason): void => {
      unfetched.delete(summary.id);
      skipped.set(summary.id, { summary, reason });
    };
    const mine = new Set<string>(); // claimed by this wait
    const taken: Mail[] = [];
    let fetchError: Error | undefined;

    // Rule 7 and 8: walk down to the watermark, match on the summary, and
    // fetch only the match - the oldest one first, so successive waits get
    // mail in arrival order (unless the oldest cannot be fetched: then a
    // later match is returned rather than none).
    const inspect = async (messages: readonly MailSummary[], { hardStop, incomplete }: InspectContext): Promise<Mail[] | undefined> => {
      const candidates: MailSummary[] = [];
      for (const summary of this.#fresh(messages)) {
        if (mine.has(summary.id)) continue;
        const reason = this.#skipReason(summary.id);
        if (reason !== undefined) {
          skip(summary, reason);
          continue;
        }
        skipped.delete(summary.id);
        if (filter.matches(summary)) candidates.push(summary);
        else rejected.set(summary.id, summary);
      }
      for (const summary of candidates.reverse()) {
        if (taken.length >= info.count) break;
        const reason = this.#skipReason(summary.id);
        if (reason !== undefined) {
          skip(summary, reason); // claimed by a concurrent wait meanwhile
          continue;
        }
        this.#claimed.add(summary.id);
        mine.add(summary.id);
        try {
          const fetchStop = Math.min(hardStop, clock.now() + FETCH_BUDGET_REQUESTS * requestTimeout);
          const detail = await callWithRetry((timeout) => this.client.getMessage(this.address, summary.id, { timeout, signal }), { clock, hardStop: fetchStop, requestTimeout, signal, attempts: FETCH_ATTEMPTS });
          taken.push(new Mail(this.address, detail, (rawSignal) => this.#raw(summary.id, rawSignal)));
          unfetched.delete(summary.id);
        } catch (error) {
          this.#claimed.delete(summary.id);
          mine.delete(summary.id);
          if (signal?.aborted) return undefined;
          if (error instanceof MailroomApiError && error.status === 404) {
            this.#gone.add(summary.id); // deleted or expired since the listing
            skip(summary, 'gone');
            continue;
          }
          if (!isTransient(error)) throw error;
          fetchError = error as Error;
          // The next check tries it again; meanwhile a later match may do.
          unfetched.set(summary.id, summary);
          incomplete();
          continue;
        }
      }
      return taken.length >= info.count ? taken : undefined;
    };

    try {
      // A listing this inbox already holds may answer at once: whatever it
      // lists exists (or 404s, and is skipped), and anything not in it
      // arrived later, so the oldest match in it is the right answer. Only
      // when it has none does the wait ask the service.
      let outcome: PollOutcome<Mail[]> | undefined;
      if (this.#snapshot) {
        const found = await inspect(this.#snapshot, { hardStop: startedAt + info.budgetMs + Math.min(requestTimeout, MAX_GRACE_MS), incomplete: () => {} });
        if (found) outcome = { result: found, coveredDeadline: false, checks: 0, failedChecks: 0, refusals: 0, elapsedMs: clock.now() - startedAt, lastError: undefined, cutShort: false, cutShortReason: undefined };
      }
      outcome ??= await this.#poll(info, 'until-found', Math.max(0, info.budgetMs - (clock.now() - startedAt)), signal, inspect);

      if (outcome.result) {
        for (const mail of outcome.result) {
          this.#consumed.add(mail.id);
          this.#options.handled?.add(this.address, mail.id);
        }
        this.#emit({ type: 'wait-end', wait: info, outcome: 'received', mails: outcome.result, elapsedMs: clock.now() - startedAt, checks: outcome.checks });
        return [...outcome.result];
      }
      throw new MailTimeoutError({
        address: this.address,
        filter: filter.description,
        budgetMs: info.budgetMs,
        elapsedMs: clock.now() - startedAt,
        checks: outcome.checks,
        failedChecks: outcome.failedChecks,
        refusals: outcome.refusals,
        rejected: [...rejected.values()].sort(byArrival),
        unfetched: [...unfetched.values()].sort(byArrival),
        skipped: [...skipped.values()].sort((a, b) => byArrival(a.summary, b.summary)),
        wanted: info.count,
        received: taken.length,
        lastError: outcome.lastError ?? fetchError,
        cutShort: outcome.cutShort,
        cutShortReason: outcome.cutShortReason,
      });
    } catch (error) {
      this.#emit({ type: 'wait-end', wait: info, outcome: 'failed', error: error as Error, elapsedMs: clock.now() - startedAt });
      throw error;
    } finally {
      for (const id of mine) this.#claimed.delete(id);
    }
  }

  async #poll<T>(info: WaitInfo, mode: 'until-found' | 'quiet', budgetMs: number, signal: AbortSignal | undefined, inspect: (messages: readonly MailSummary[], context: InspectContext) => Promise<T | undefined>): Promise<PollOutcome<T>> {
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
      pacer: () => pacerFor(clock, pacerKey(this.client, this.address)),
      list: async (timeout, listSignal) => {
        const listing = await this.client.listMessages(this.address, { limit: MAX_LIST_LIMIT, timeout, signal: listSignal });
        this.#snapshot = listing.messages;
        return listing.messages;
      },
      inspect,
      onEvent: this.#onEvent ? (event) => this.#emit({ ...event, wait: info }) : undefined,
    });
  }

  /** The long-poll when the service advertises one (and `serverWait` allows it), else the polling loop. */
  async #strategy(signal: AbortSignal | undefined): Promise<WaitStrategy> {
    if (!this.#options.serverWait) return pollingStrategy;
    const { wait: path } = await this.client.features({ timeout: this.#options.requestTimeout, signal });
    if (path === undefined) return pollingStrategy;
    return longPollStrategy({
      sinceId: this.#watermark?.id,
      hold: async (sinceId, holdMs, holdSignal) => {
        const listing = await this.client.waitForMail(this.address, { path, sinceId, holdMs, limit: MAX_LIST_LIMIT, signal: holdSignal });
        this.#snapshot = listing.messages;
        return listing;
      },
    });
  }

  /** Summaries above the watermark, newest first (the ones known gone included). */
  #fresh(messages: readonly MailSummary[]): MailSummary[] {
    const mark = this.#watermark;
    // Walk down to the watermark by id. If it is gone (expired, deleted),
    // stop at the first message that arrived no later than it did instead:
    // ids need not sort on every service, arrival times do.
    const markListed = mark !== null && messages.some((m) => m.id === mark.id);
    const cutAt = !markListed && mark?.receivedAt ? mark.receivedAt.getTime() : undefined;
    const fresh: MailSummary[] = [];
    for (const message of messages) {
      if (markListed && message.id === mark.id) break;
      if (cutAt !== undefined && message.receivedAt.getTime() <= cutAt) break;
      fresh.push(message);
    }
    return fresh;
  }

  /** Why a wait must pass over this message, or undefined when it may take it. */
  #skipReason(id: string): SkipReason | undefined {
    if (this.#consumed.has(id)) return 'returned';
    if (this.#options.handled?.has(this.address, id) === true) return 'handled';
    if (this.#gone.has(id)) return 'gone';
    if (this.#claimed.has(id)) return 'claimed';
    return undefined;
  }

  #raw(id: string, signal: AbortSignal | undefined): Promise<string> {
    return this.#retry((timeout) => this.client.getRawMessage(this.address, id, { timeout, signal }), signal);
  }

  #retry<T>(call: (timeout: number) => Promise<T>, signal: AbortSignal | undefined, budgetMs = CALL_BUDGET_MS): Promise<T> {
    const { clock, requestTimeout } = this.#options;
    return callWithRetry(call, { clock, hardStop: clock.now() + budgetMs, requestTimeout, signal });
  }

  #waitInfo(kind: WaitKind, count: number, filter: CompiledFilter, budgetMs: number): WaitInfo {
    return Object.freeze({
      id: ++this.#waits,
      kind,
      title: describeWait(this.address, filter.description, { kind, count, within: budgetMs }),
      address: this.address,
      filter: filter.description,
      filterSpec: filter.source,
      budgetMs,
      count,
    });
  }

  /** The caller's signal combined with the inbox's own cut-off, if any. */
  #signalFor(signal: AbortSignal | undefined): AbortSignal | undefined {
    const cutoff = this.#waitSignal?.();
    if (!cutoff) return signal;
    return signal ? AbortSignal.any([signal, cutoff]) : cutoff;
  }

  #around<T>(info: WaitInfo, run: () => Promise<T>): Promise<T> {
    return this.#aroundWait ? this.#aroundWait(info, run) : run();
  }

  #emit(event: InboxEvent): void {
    this.#onEvent?.(Object.freeze(event));
  }
}

/** True for an `Inbox` made by this copy of mailroom. */
export function isInbox(value: unknown): value is Inbox {
  return value instanceof Inbox;
}

function pacerKey(client: MailroomClient, address: string): string {
  return `${client.apiURL}\u0000${address.toLowerCase()}`;
}

/** One paced list call with retries: the watermark read and `messages()`. */
async function listPaced(client: MailroomClient, options: ResolvedInboxOptions, address: string, limit: number, hardStop: number, signal: AbortSignal | undefined): Promise<readonly MailSummary[]> {
  const { clock, requestTimeout } = options;
  return callWithRetry(
    async (timeout) => {
      const answer = await pacerFor(clock, pacerKey(client, address)).run(
        // The pacer may hold the call for up to a second; the timeout
        // starts when the request does.
        async () => (await client.listMessages(address, { limit, timeout: Math.min(timeout, Math.max(1, hardStop - clock.now())), signal } satisfies CallOptions & { limit: number })).messages,
        { signal },
      );
      if (answer === TOO_LATE) throw signal?.reason ?? new Error('aborted');
      return answer;
    },
    { clock, hardStop, requestTimeout, signal },
  );
}

function watermarkFailure(error: unknown, address: string, apiURL: string): unknown {
  if (!(error instanceof MailroomError) || !isTransient(error)) return error;
  return new MailroomError(`Could not read the watermark of ${address} from ${apiURL}: ${error.message}. Is the mail server running there (MAILROOM_API_URL)?`, {
    slug: error.slug,
    status: error.status,
    address,
    cause: error,
  });
}

function validateWaitOptions(options: unknown, budgetName: 'timeout' | 'within'): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`Expected wait options to be an object like { ${budgetName}: 10_000 }`);
  for (const key of Object.keys(options)) {
    if (key !== budgetName && key !== 'signal') {
      const hint = key === 'timeout' || key === 'within' ? `: this wait's budget is \`${budgetName}\`` : '';
      throw new TypeError(`Unknown wait option \`${key}\`${hint} (expected \`${budgetName}\` and \`signal\`)`);
    }
  }
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('Expected `signal` to be an AbortSignal');
}

function byArrival(a: MailSummary, b: MailSummary): number {
  return a.receivedAt.getTime() - b.receivedAt.getTime();
}
