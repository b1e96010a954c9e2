// Server-side waits: a request held open until matching mail arrives, woken by
// the arrival itself (`store.onArrival`), never by a polling timer. The MCP tool
// `wait_for_message` and the HTTP long-poll `GET /api/v1/mailbox/wait` both
// hold through `holdForMail`; each has its own `WaitSlots`.
//
// How a wait draws on the address's list budget (the floor of one list call
// per second per address still holds, docs/CONTRACT.md "A wait is no way around
// the floor"):
//
// - A wait looks at the mailbox when it starts, and that look spends one list
//   call, exactly like `GET /mailbox`. When the budget is spent (a list call
//   was just made), the look is deferred until the budget allows it - the wait
//   is held meanwhile, never refused, since a 429 would only make the caller
//   sleep the same time and ask again.
// - While held, the server never looks again on the caller's behalf. Mail
//   arriving for the address wakes the wait; when that mail answers it, the
//   answer goes out at once and is recorded as one more list call
//   (`Budget.record`), so the caller's next list call or wait within the
//   window is pushed back. The answer is not delayed by the budget: it is the
//   mail that came, not the caller asking again, and the number of such
//   answers is bounded by the mail sent to the address.
// - A timeout is only answered after the wait's one paid look: a wait never
//   says "nothing came" without having looked, so `timeout=0` cannot be used
//   to poll around the floor.
import { performance } from 'node:perf_hooks';
import type { RequestBudget } from '../budgets/budget.js';
import type { MailboxReader } from '../store/mailbox-reader.js';
import type { ParsedSummary } from '../base/parsed-mail.js';
import type { MailStore } from '../store/mail-store.js';
import type { StoredMessage } from '../base/stored-message.js';

export interface WaitContext {
  readonly store: MailStore;
  readonly reader: MailboxReader;
  readonly listBudget: RequestBudget;
}

export interface HoldRequest {
  /** The mailbox key (validated, lower-cased). */
  readonly mailbox: string;
  /** Only messages whose id sorts after this count; every message when undefined. */
  readonly sinceId: string | undefined;
  readonly timeoutMs: number;
  /** The server-side filter; a wait without one is answered by any new message. */
  readonly matches: (summary: ParsedSummary) => boolean;
  /** Aborted when the caller goes away or the server closes. */
  readonly signal: AbortSignal;
}

export type HoldOutcome =
  /** `found` is oldest first; `by` says whether the paid look or an arrival answered. */
  | { readonly kind: 'found'; readonly found: readonly StoredMessage[]; readonly by: 'look' | 'arrival'; readonly waitedMs: number }
  | { readonly kind: 'timed_out'; readonly waitedMs: number }
  | { readonly kind: 'aborted'; readonly waitedMs: number }
  | { readonly kind: 'failed'; readonly error: unknown; readonly waitedMs: number };

// Over 80 lines on purpose: one wait's life - the paid look, the arrival
// listener, the timer, the abort - shares one closure, so that every way out
// (found, timed out, aborted, failed) releases all of them in `finish`.
/** Holds until a message newer than `sinceId` matches, the timeout passes (after one look), or the signal aborts. */
export function holdForMail(ctx: WaitContext, request: HoldRequest): Promise<HoldOutcome> {
  const { store, reader, listBudget } = ctx;
  const { mailbox, sinceId, matches, signal } = request;
  const startedAt = performance.now();
  const waited = () => performance.now() - startedAt;

  return new Promise<HoldOutcome>((resolve) => {
    let settled = false;
    /** The paid look happened: a timeout may now be answered. */
    let paid = false;
    /** Some look saw the whole mailbox: later arrivals need only look at themselves. */
    let scanned = false;
    let timedOut = false;
    let deferTimer: NodeJS.Timeout | undefined;
    // Looks run one at a time, in order, so an answer never races a later one.
    let queue: Promise<void> = Promise.resolve();

    const finish = (outcome: HoldOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(deferTimer);
      clearTimeout(timeoutTimer);
      unsubscribe();
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => finish({ kind: 'aborted', waitedMs: waited() });

    const look = async (only: StoredMessage | undefined, by: 'look' | 'arrival') => {
      if (settled) return;
      const candidates = only ? [only] : await store.newerThan(mailbox, sinceId);
      if (settled) return;
      if (!only) scanned = true;
      const hits: StoredMessage[] = [];
      for (const message of candidates) {
        if (message.removed) continue;
        const summary = await reader.summaryOf(message);
        if (settled) return;
        if (matches(summary)) hits.push(message);
      }
      if (hits.length > 0) {
        if (by === 'arrival') await listBudget.record(mailbox);
        finish({ kind: 'found', found: hits.reverse(), by, waitedMs: waited() });
      } else if (timedOut && paid) {
        finish({ kind: 'timed_out', waitedMs: waited() });
      }
    };

    const enqueue = (only: StoredMessage | undefined, by: 'look' | 'arrival') => {
      queue = queue.then(() => look(only, by)).catch((error: unknown) => finish({ kind: 'failed', error, waitedMs: waited() }));
    };

    // Subscribed before the first look, so nothing can arrive unseen between the two.
    // An arrival without a message (a shared store's feed came back after a break) asks for a whole look.
    const unsubscribe = store.onArrival(mailbox, (message) => {
      if (message && sinceId !== undefined && message.id <= sinceId) return;
      enqueue(scanned ? message : undefined, 'arrival');
    });

    const paidLook = async () => {
      if (settled) return;
      const decision = await listBudget.take(mailbox);
      if (settled) return;
      if (decision.allowed) {
        paid = true;
        enqueue(undefined, 'look');
        return;
      }
      // Only an injected clock that stands still can keep the budget spent
      // past the timeout; the look is then recorded rather than held forever.
      if (timedOut && waited() > request.timeoutMs + listBudget.windowMs + 1000) {
        await listBudget.record(mailbox);
        paid = true;
        enqueue(undefined, 'look');
        return;
      }
      deferTimer = setTimeout(startPaidLook, Math.max(1, decision.retryAfterMs));
    };
    const startPaidLook = () => {
      paidLook().catch((error: unknown) => finish({ kind: 'failed', error, waitedMs: waited() }));
    };

    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      // Behind any look still running: its answer wins over the timeout.
      queue = queue.then(() => {
        if (paid) finish({ kind: 'timed_out', waitedMs: waited() });
      });
    }, request.timeoutMs);

    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    startPaidLook();
  });
}

/** Case-insensitive substring filters on the summary's `from` and `subject`; absent ones match anything. */
export function containsFilter(fromContains: string | undefined, subjectContains: string | undefined): (summary: ParsedSummary) => boolean {
  const from = fromContains?.toLowerCase();
  const subject = subjectContains?.toLowerCase();
  return (summary) =>
    (from === undefined || summary.from.toLowerCase().includes(from)) && (subject === undefined || summary.subject.toLowerCase().includes(subject));
}
