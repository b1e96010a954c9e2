// The fault matrix's cells, in one place for `npm run faults` (scripts/faults.ts)
// and its test (test/faults/matrix-suite.ts): each fault, how it is armed, and
// what each call must come to under it with each strategy.
//
// The calls, on a fresh inbox whose mailbox already holds one mail the
// filters reject ("Newsletter"):
// - `expectMail` waits for "Your code", sent 300 ms into the wait: the right
//   mail, once (a second look passes it over as returned), or MailTimeoutError.
// - `expectNoMail` waits out a quiet period for "Unwanted" while another
//   "Newsletter" arrives: quiet, or `quiet_unconfirmed` when it could not look.
// - `expectNoMail (caught)` is the same wait while an "Unwanted" arrives: it
//   must be caught (UnexpectedMailError) or unconfirmed, never a quiet pass.
// - `delete` is teardown's `inbox.delete()` with the runner's budget
//   (`teardownBudget`): the mailbox emptied, or a typed MailroomError.
//
// Faults are armed as the call starts; most hit the next two requests the
// call makes (its checks, the long-poll, the fetch, the delete), so a wait
// has to ride them out and still find its mail.
import type { MailroomServer } from '../../src/server/index.js';
import type { FaultProxy } from './fault-proxy.js';

export const STRATEGIES = ['polling', 'server wait'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export const CALLS = ['expectMail', 'expectNoMail', 'expectNoMail (caught)', 'delete'] as const;
export type Call = (typeof CALLS)[number];

export type Outcome =
  /** expectMail: the right mail, and a second look passes it over as already returned. */
  | 'mail'
  /** expectMail: a MailTimeoutError. */
  | 'mail timeout'
  /** expectNoMail: resolved, the period looked at when it ended. */
  | 'quiet'
  /** expectNoMail: UnexpectedMailError naming the mail. */
  | 'unexpected mail'
  /** expectNoMail: MailroomError `quiet_unconfirmed`. */
  | 'quiet unconfirmed'
  /** delete: resolved, and the mailbox is empty on the server. */
  | 'deleted'
  /** delete: a typed MailroomError (the teardown writes it as a note). */
  | 'delete failed'
  /** Anything else: a wrong mail, a duplicate, an untyped error, a pass that should have failed. */
  | 'wrong'
  /** No answer within the call's bound plus a margin. */
  | 'hang';

/** The matrix's timings, short so it runs in seconds: every wait ends within its deadline plus one request timeout. */
export const TIMINGS = Object.freeze({
  requestTimeout: 400,
  /** expectMail's budget. */
  mailBudget: 3_500,
  /** expectNoMail's quiet period. */
  quietPeriod: 3_500,
  /** When the mail of a cell is sent, after the call started. */
  sendAfter: 300,
});

export interface ArmContext {
  readonly proxy: FaultProxy;
  readonly server: MailroomServer;
  readonly address: string;
  readonly call: Call;
  /** Runs `task` after `ms`; the cell waits for it before it ends. */
  readonly later: (ms: number, task: () => Promise<void>) => void;
}

export interface FaultCase {
  readonly name: string;
  /** Where the fault is made: the TCP proxy or the server's own fault switch. */
  readonly where: 'proxy' | 'server';
  /** Arms the fault as the call starts. */
  readonly arm: (ctx: ArmContext) => void;
  /** The outcome when it differs from the call's outcome without faults. */
  readonly expect?: (call: Call, strategy: Strategy) => Outcome | undefined;
  /**
   * The honest outcome a call may come to instead when the server refused
   * one of its checks with 429: a whole second of Retry-After out of a
   * 3.5 s budget can leave no room for the closing check.
   */
  readonly after429?: (call: Call, strategy: Strategy) => Outcome | undefined;
}

/** What each call comes to with no fault: a fault that cannot be ridden out says otherwise. */
export const CLEAN_OUTCOME: Readonly<Record<Call, Outcome>> = Object.freeze({
  expectMail: 'mail',
  expectNoMail: 'quiet',
  'expectNoMail (caught)': 'unexpected mail',
  delete: 'deleted',
});

/** When nothing can get through: each call's honest failure. */
const GAVE_UP: Readonly<Record<Call, Outcome>> = Object.freeze({
  expectMail: 'mail timeout',
  expectNoMail: 'quiet unconfirmed',
  'expectNoMail (caught)': 'quiet unconfirmed',
  delete: 'delete failed',
});

const TWICE = 2;

export const FAULTS: readonly FaultCase[] = Object.freeze([
  { name: 'none', where: 'proxy', arm: () => {} },
  {
    name: 'drop the request (FIN, never passed on) x2',
    where: 'proxy',
    arm: ({ proxy }) => proxy.arm({ route: 'api', times: TWICE, fault: { kind: 'drop' } }),
  },
  {
    // Closing the idle kept-alive connection races the client's next request
    // on it, so this costs the call two or three failed requests.
    name: 'close idle connections, drop 2 new ones',
    where: 'proxy',
    arm: ({ proxy }) => proxy.dropConnections(TWICE),
  },
  {
    name: 'reset after the request x2',
    where: 'proxy',
    arm: ({ proxy }) => proxy.arm({ route: 'api', times: TWICE, fault: { kind: 'reset-after-request' } }),
    // The proxy resets the client once it has passed the request on, so the
    // client's failure can come before the server stamps the call. The
    // pacer's floor runs from the failure (src/wait/pacer.ts), and when the
    // stamp came more than its 5 ms guard later - the server's process
    // behind on a loaded machine (stress-ng: 2 cells of 138 in 4 runs) -
    // the next check is refused with 429.
    after429: (call) => (call === 'expectNoMail' || call === 'expectNoMail (caught)' ? GAVE_UP[call] : undefined),
  },
  {
    name: 'reset after the response x2',
    where: 'proxy',
    arm: ({ proxy }) => proxy.arm({ route: 'api', times: TWICE, fault: { kind: 'reset-after-response' } }),
  },
  {
    name: 'stall the first request past the request timeout',
    where: 'proxy',
    arm: ({ proxy, call }) => proxy.arm({ route: call === 'delete' ? 'deleteMailbox' : 'check', times: 1, fault: { kind: 'stall' } }),
    // A stalled long-poll looks like a held one until its own timeout, the
    // hold plus one request timeout: past the deadline, with no time left to
    // fall back. The wait fails in time and honestly, but does not see the mail.
    expect: (call, strategy) => (strategy === 'server wait' && call !== 'delete' ? GAVE_UP[call] : undefined),
  },
  {
    name: 'stall every request, for good',
    where: 'proxy',
    arm: ({ proxy }) => proxy.arm({ route: 'api', times: 1_000, fault: { kind: 'stall' } }),
    // Every request runs into its timeout: the time bound at its tightest.
    expect: (call) => GAVE_UP[call],
  },
  {
    name: 'answer slowly (128 B every 10 ms) x2',
    where: 'proxy',
    arm: ({ proxy }) => proxy.arm({ route: 'api', times: TWICE, fault: { kind: 'slow', bytes: 128, everyMs: 10 } }),
  },
  {
    name: 'answer slower than the request timeout (16 B every 50 ms)',
    where: 'proxy',
    arm: ({ proxy, call }) => proxy.arm({ route: call === 'delete' ? 'deleteMailbox' : 'check', times: 1, fault: { kind: 'slow', bytes: 16, everyMs: 50 } }),
  },
  {
    name: 'cut the server off, back after 1.5 s',
    where: 'proxy',
    arm: ({ proxy, later }) => {
      proxy.cut();
      later(1_500, async () => proxy.restore());
    },
    // The delete's budget (two request timeouts) is over before the server is back.
    expect: (call) => (call === 'delete' ? 'delete failed' : undefined),
  },
  {
    name: 'cut the server off for good',
    where: 'proxy',
    arm: ({ proxy }) => proxy.cut(),
    expect: (call) => GAVE_UP[call],
  },
  {
    // Past the deadline, but inside a long-poll's own timeout (the hold plus
    // one request timeout): a quiet period's hold is answered late, and the
    // next hold may only use what is left of the window.
    name: 'answers 200 ms past the deadline x2 (server slow)',
    where: 'server',
    arm: ({ server, address }) => server.faults.inject({ address, times: TWICE, fault: { kind: 'slow', delayMs: TIMINGS.quietPeriod + 200 } }),
    expect: (call, strategy) => {
      // Two requests over the request timeout use up the delete's budget.
      if (call === 'delete') return 'delete failed';
      // The first hold lists the mailbox as it was when it came in: the mail is not in it.
      if (strategy === 'server wait') return GAVE_UP[call];
      return undefined;
    },
  },
  {
    name: '429 storm, Retry-After 1..5',
    where: 'server',
    arm: ({ server, address }) => {
      for (let retryAfter = 1; retryAfter <= 5; retryAfter++) server.faults.inject({ address, fault: { kind: 'rate_limit', retryAfter } });
    },
    // Retry-After is obeyed to the letter (rule 5), and 1 + 2 + 3 s is past
    // the budget: the wait ends as soon as it knows, not at the deadline.
    expect: (call) => GAVE_UP[call],
  },
  {
    name: '5xx burst (503, 503, 500)',
    where: 'server',
    arm: ({ server, address }) => {
      server.faults.inject({ address, times: 2, fault: { kind: 'status', status: 503 } });
      server.faults.inject({ address, fault: { kind: 'status', status: 500 } });
    },
  },
  {
    name: 'malformed JSON x2',
    where: 'server',
    arm: ({ server, address }) => server.faults.inject({ address, times: TWICE, fault: { kind: 'malformed_json' } }),
  },
  {
    name: 'truncated body x2',
    where: 'server',
    arm: ({ server, address }) => server.faults.inject({ address, times: TWICE, fault: { kind: 'truncated' } }),
  },
  {
    name: 'wrong content type (text/html) x2',
    where: 'server',
    arm: ({ server, address }) => server.faults.inject({ address, times: TWICE, fault: { kind: 'wrong_type' } }),
  },
]);

export interface Cell {
  readonly fault: FaultCase;
  readonly strategy: Strategy;
  readonly call: Call;
  readonly expected: Outcome;
  /** Also honest once a check was refused with 429 (FaultCase.after429). */
  readonly after429?: Outcome | undefined;
  /** `fault × strategy × call`, as the table and the test name it. */
  readonly name: string;
}

export function cells(faults: readonly FaultCase[] = FAULTS): Cell[] {
  return faults.flatMap((fault) =>
    STRATEGIES.flatMap((strategy) =>
      CALLS.map((call) => ({
        fault,
        strategy,
        call,
        expected: fault.expect?.(call, strategy) ?? CLEAN_OUTCOME[call],
        after429: fault.after429?.(call, strategy),
        name: `${fault.name} × ${strategy} × ${call}`,
      })),
    ),
  );
}
