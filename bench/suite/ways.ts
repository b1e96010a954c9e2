// What the suite benchmark's orchestrator (bench/suite.ts) and its spec
// (signup.bench.ts, in the Playwright workers) agree on: the four ways a
// test takes the confirmation link, the variables that pass the run's
// settings between the processes, and the measurement each test reports.

/** Where a test takes the confirmation link from. */
export type Way = 'mailroom' | 'polling' | 'hand-loop' | 'outbox';

export const WAYS: readonly Way[] = ['mailroom', 'polling', 'hand-loop', 'outbox'];

/** As printed in the table; the letters are the issue's. */
export const WAY_LABELS: Readonly<Record<Way, string>> = {
  mailroom: '(a) mailroom as shipped: `inbox` fixture, `inbox.expectMail`',
  polling: '(b) mailroom forced to polling (MAILROOM_SERVER_WAIT=0)',
  'hand-loop': '(c) hand-written loop: sleep 1 s, list, newest match, fetch',
  outbox: "(d) floor: the link from the demo app's own outbox",
};

/** The variables the orchestrator sets for the Playwright run. */
export const ENV = {
  way: 'MAILROOM_BENCH_SUITE_WAY',
  tests: 'MAILROOM_BENCH_SUITE_TESTS',
  rounds: 'MAILROOM_BENCH_SUITE_ROUNDS',
  appURL: 'MAILROOM_BENCH_SUITE_APP_URL',
  report: 'MAILROOM_BENCH_SUITE_REPORT',
  output: 'MAILROOM_BENCH_SUITE_OUTPUT',
} as const;

export const DEFAULT_TESTS = 100;

/** The annotation a test leaves with its timings (JSON `Timings`), read by the reporter. */
export const TIMINGS_ANNOTATION = 'bench-suite-timings';

export interface Timings {
  /** From just before the click on "Sign up" to the link in the test's hands. */
  readonly clickToMailMs: number;
  /** From the "Check your inbox" page visible (the app has sent the mail by then) to the link in hand. */
  readonly answeredToMailMs: number;
}

/** The demo's confirmation link, as its mails write it. */
export const CONFIRM_LINK = /https?:\/\/\S+\/confirm\?token=[0-9a-f]+/;

export function wayFromEnv(env: NodeJS.ProcessEnv = process.env): Way {
  const raw = env[ENV.way];
  if (!WAYS.includes(raw as Way)) throw new TypeError(`Expected ${ENV.way} to be one of ${WAYS.join(', ')}, got ${JSON.stringify(raw)}`);
  return raw as Way;
}

/** How many tests a run has: `MAILROOM_BENCH_SUITE_TESTS` (to validate with fewer), else 100. */
export function testsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return countFromEnv(ENV.tests, 'tests', DEFAULT_TESTS, env);
}

/** How many times each way runs; the wall times reported are the medians. */
export function roundsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  return countFromEnv(ENV.rounds, 'rounds', 1, env);
}

function countFromEnv(name: string, what: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  if (!/^[1-9]\d*$/.test(raw)) throw new TypeError(`Expected ${name} to be a whole number of ${what}, at least 1, got "${raw}"`);
  return Number(raw);
}

export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name]?.trim();
  if (!value) throw new Error(`${name} is not set: this file is run by \`npm run bench -- suite\` (bench/suite.ts)`);
  return value;
}
