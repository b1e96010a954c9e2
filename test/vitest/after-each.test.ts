// A wait in afterEach runs after the test body, on the hook's own timeout:
// the test's timeout, nearly spent by the body, must not cut it short.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect as globalExpect } from 'vitest';
import type { Mail } from '../../src/index.js';
import { test } from '../../src/vitest/index.js';
import { send } from './support/env.js';

const BODY_TIMEOUT_MS = 1_500;

describe('a wait in afterEach after a test that used most of its timeout', () => {
  let received: Mail | undefined;
  let waitedMs = 0;

  test.afterEach(async ({ inbox }) => {
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

  test('spends most of its timeout', { timeout: BODY_TIMEOUT_MS }, async ({ inbox, expect }) => {
    expect(inbox.address).toMatch(/@/);
    // Uses up the test's time, so that less than 300 ms is left when it ends.
    await delay(BODY_TIMEOUT_MS - 300);
  });
});
