// A wait in afterEach runs after the test body, on the hook's own timeout:
// the test's timeout, nearly spent by the body, must not cut it short.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect as globalExpect } from 'vitest';
import type { Mail } from '../../src/index.js';
import { test } from '../../src/vitest/index.js';
import { send } from './support/env.js';

const BODY_TIMEOUT_MS = 6_000;
/** What the body leaves of its timeout: less than the 1.2 s the hook's mail takes to come. */
const LEFT_MS = 500;

// When the test's timeout clock started, near enough: Vitest starts it
// before the fixtures, and this one is resolved first. The body sleeps to a
// point on that clock, not for a fixed time, so a slow inbox setup on a
// loaded machine does not push the body past its timeout (a fixed 1.2 s
// sleep in a 1.5 s test did, once in three runs under load), and 6 s
// leaves room for a setup that took 3 s beside the rest of the suite.
const timed = test.extend<{ startedAt: number }>({
  startedAt: async ({}, use) => use(performance.now()),
});

describe('a wait in afterEach after a test that used most of its timeout', () => {
  let received: Mail | undefined;
  let waitedMs = 0;

  timed.afterEach(async ({ inbox }) => {
    // The mail comes a while into the hook, so the wait really has to wait:
    // longer than what was left of the test's own timeout.
    const started = performance.now();
    const sending = delay(1_200).then(() => send(inbox.address, { subject: 'After the body' }));
    received = await inbox.expectMail({ subject: 'After the body' }, { timeout: 10_000 });
    waitedMs = performance.now() - started;
    await sending;
  });

  afterAll(() => {
    globalExpect(received?.subject).toBe('After the body');
    globalExpect(waitedMs).toBeGreaterThan(1_000);
  });

  timed('spends most of its timeout', { timeout: BODY_TIMEOUT_MS }, async ({ startedAt, inbox, expect }) => {
    expect(inbox.address).toMatch(/@/);
    // Uses up the test's time, so that about LEFT_MS is left when it ends.
    await delay(Math.max(0, startedAt + BODY_TIMEOUT_MS - LEFT_MS - performance.now()));
  });
});
