import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions are real-time bounds of mailroom itself (a wait
 * ends within its deadline plus one request timeout; a body uses most of
 * its timeout). They run after the rest, on their own, because the rest
 * keeps two cores saturated, above all while six workers import the tree
 * at the start: in the flake hunt the fault matrix's first cells, run
 * then, missed a 400 ms request timeout with no fault armed, and the
 * after-each test's inbox setup took most of its 3 s.
 */
const TIMING = [
  'test/checks/bounds-time.test.ts',
  'test/inbox/snapshot-bounds-time.test.ts',
  'test/server/checks-off-thread.test.ts',
  'test/vitest/after-each.test.ts',
];
/**
 * The fault matrix, after the timing files and not beside them: its cells
 * hold 400 ms request timeouts with 16 cells, their proxies and the server
 * in one process, and a CI run that ran it beside checks-off-thread (a
 * 3 MB mail checked on a worker thread, one core for 7 s) and three other
 * files still importing failed an unfaulted delete on two missed timeouts.
 */
const FAULT_MATRIX = [
  'test/faults/matrix-polling-1.test.ts',
  'test/faults/matrix-polling-2.test.ts',
  'test/faults/matrix-server-wait-1.test.ts',
  'test/faults/matrix-server-wait-2.test.ts',
];

/**
 * The store contract suite: the files that prove, through a server started
 * by test/server/helpers.ts `start()`, what the store holds and answers
 * (mail, mailboxes, paging, budgets, eviction, retention, waits woken by a
 * store, the deferral lab's rules and attempt log, webhook registrations,
 * queue, log and dead letters). The `redis` project runs them again against
 * a real redis-server (the same files, not a copy: `start()` picks the
 * store), so both stores answer to one suite. The server's other files
 * (SMTP and HTTP parsing, refusals, fuzzing, MCP, the web UI, cross-site and
 * security rules) run once, on the memory store: what they prove is above
 * the store, and running them on Redis too cost about 35 CPU s of the
 * suite's budget for no path of the Redis store they alone reach.
 */
const STORE_CONTRACT = [
  'test/server/store.test.ts',
  'test/server/api.test.ts',
  // Broken mail's odd fields go through the Redis store's summary records.
  'test/server/bad-mail.test.ts',
  'test/server/catch-all.test.ts',
  'test/server/evicted-mail.test.ts',
  'test/server/lab-store.test.ts',
  'test/server/long-poll.test.ts',
  'test/server/mailbox-index.test.ts',
  'test/server/paging.test.ts',
  // Provider events (Resend end to end, SES's held notifications, SendGrid's dropped) through the store's queue and log.
  'test/server/provider-events-store.test.ts',
  'test/server/resource-bounds.test.ts',
  'test/server/retention.test.ts',
  'test/server/smtp-attempts.test.ts',
  'test/server/smtp-rules.test.ts',
  'test/server/store-choice.test.ts',
  'test/server/webhooks-store.test.ts',
  'test/server/webhooks.test.ts',
  'test/server/webhook-bounds.test.ts',
];

/**
 * Left out of `npm run test:quick` (MAILROOM_QUICK=1, the `suite` project
 * only), the inner loop's run: what starts other processes (the CLI, its
 * replicas, redis-server, Chromium, inner Vitest, Playwright and Jest runs), the
 * layer rules' planted trees (lint:layers checks the real one), and the fuzz
 * properties (`npm run fuzz`). `npm test` runs them all.
 */
const NOT_QUICK = [
  'test/cli/**',
  'test/layout/**',
  'test/server/replicas.test.ts',
  'test/server/webhook-replicas.test.ts',
  'test/server/redis-*.test.ts',
  'test/server/security.test.ts',
  'test/server/fuzz-*.test.ts',
  'test/demo/main.test.ts',
  'test/demo/chromium.test.ts',
  'test/playwright/adapter.test.ts',
  'test/vitest/failure-output.test.ts',
  'test/jest/adapter.test.ts',
];
const quick = Boolean(process.env.MAILROOM_QUICK);

export default defineConfig({
  test: {
    // The mail server and demo app the mailroomjs/vitest suite uses (test/vitest/).
    globalSetup: ['test/vitest/support/global-setup.ts'],
    // The suite mostly waits on sockets and on the list floor, not on the
    // CPU: Vitest's default (one worker less than the cores, so one worker
    // on a 2-core machine) ran its files one after another. Every file
    // uses its own server on free ports, so files run side by side; on 2
    // cores, 6 workers took 25-30 s where 4 took 35-43 s and 1 took 170 s.
    maxWorkers: Math.max(6, availableParallelism()),
    // A worker runs file after file in one process, importing the shared
    // modules once: a fresh process per file cost about 0.45 CPU s each,
    // 59 of the suite's 178 CPU seconds (131 files). Every file starts its
    // own servers and restores what it changes (timers, env), so nothing
    // carries from one file to the next. The timing project keeps the
    // default: its two files want a quiet, fresh process.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 30_000,
    projects: [
      // test/vitest/inner/ holds a deliberately failing suite with its own
      // config, run as a child process by test/vitest/failure-output.test.ts.
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: quick ? [...TIMING, ...FAULT_MATRIX, ...NOT_QUICK] : [...TIMING, ...FAULT_MATRIX],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'redis', include: STORE_CONTRACT, globalSetup: ['test/support/redis-global-setup.ts'], sequence: { groupOrder: 0 } },
      },
      { extends: true, test: { name: 'timing', include: TIMING, isolate: true, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'faults', include: FAULT_MATRIX, isolate: true, sequence: { groupOrder: 2 } } },
    ],
  },
});
