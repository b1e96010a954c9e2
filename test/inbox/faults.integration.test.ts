// The wait loop against every kind of trouble the server's fault switch can
// make, through real sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { createInbox, MailroomNetworkError, MailTimeoutError } from '../../src/index.js';
import { systemClock } from '../../src/wait/clock.js';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';
import { eventsOf, observedInbox, send, startTestServer } from '../support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

// Faults are armed per address, so the tests run side by side.
describe.concurrent('the wait loop under faults', () => {
  it('sleeps exactly Retry-After on a 429 and does not count the refused round', async () => {
    // On the inbox's fake clock: "exactly" is exact. The injected 429
    // spends no list budget, so the server needs no shared clock.
    const clock = new FakeClock();
    const { inbox, events } = await observedInbox(server, { clock });
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'list', times: 1, fault: { kind: 'rate_limit', retryAfter: 2 } });
    const mail = await driveClock(clock, inbox.expectMail({ subject: 'Confirm' }));
    expect(mail.subject).toBe('Confirm');
    const [refused] = eventsOf(events, 'refused');
    const checks = eventsOf(events, 'check');
    expect(refused).toMatchObject({ retryAfterMs: 2000 });
    expect(checks).toHaveLength(1);
    expect(eventsOf(events, 'sleep').map((e) => [e.reason, e.ms])).toEqual([['retry-after', 2000]]);
    expect(clock.sleeps).toEqual([2000]);
    expect(checks[0]!.startedMs - refused!.elapsedMs).toBe(2000);
    expect(checks[0]!.round).toBe(0);
    // The refused call and the one after it: a fresh inbox reads no watermark.
    expect(server.stats(inbox.address)).toMatchObject({ list: 2, rateLimited: 1, message: 1 });
  });

  it('rides out a burst of 5xx answers: transient, counted as rounds, the deadline governs', async () => {
    const { inbox, events } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'list', times: 2, fault: { kind: 'status', status: 503 } });
    server.faults.inject({ address: inbox.address, route: 'list', times: 1, fault: { kind: 'status', status: 500 } });
    const mail = await inbox.expectMail({ subject: 'Confirm' }, { timeout: 15_000 });
    expect(mail.subject).toBe('Confirm');
    expect(eventsOf(events, 'check-failed').map((e) => (e.error as { slug?: string }).slug)).toEqual(['unavailable', 'unavailable', 'internal_error']);
    expect(eventsOf(events, 'check')[0]!.round).toBe(3);
    expect(server.stats(inbox.address)).toMatchObject({ faulted: 3, rateLimited: 0 });
  });

  it('stays exactly once when the list answer is lost to a reset after the server sent it', async () => {
    const { inbox, events } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'list', times: 1, fault: { kind: 'reset' } });
    const mail = await inbox.expectMail({ subject: 'Confirm' });
    expect(eventsOf(events, 'check-failed')[0]!.error).toBeInstanceOf(MailroomNetworkError);
    // The server did the work and counted the call; the client paced from
    // the failure, so the retry did not earn a 429.
    expect(server.stats(inbox.address)).toMatchObject({ list: 2, rateLimited: 0, message: 1 });
    await expect(inbox.expectMail({ subject: 'Confirm' }, { timeout: 1500 })).rejects.toThrow(MailTimeoutError);
    expect(mail.subject).toBe('Confirm');
  });

  it('stays exactly once when the fetch answer is lost to a reset', async () => {
    const { inbox } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Pay' });
    server.faults.inject({ address: inbox.address, route: 'message', times: 1, fault: { kind: 'reset' } });
    const mail = await inbox.expectMail({ subject: 'Pay' });
    expect(mail.subject).toBe('Pay');
    expect(server.stats(inbox.address).message).toBe(2);
    const again = (await inbox.expectMail({ subject: 'Pay' }, { timeout: 1500 }).catch((e: unknown) => e)) as MailTimeoutError;
    expect(again).toBeInstanceOf(MailTimeoutError);
    // It did arrive, and was returned once: the failure says so, not "Nothing arrived at all".
    expect(again.message).toContain('Already returned by an earlier wait: "Pay" from Acme <hello@acme.example>');
    expect(again.message).not.toContain('Nothing arrived at all');
  });

  it('gives up on an answer slower than the request timeout and asks again', async () => {
    // 2 s, not less: the call after the slow one must be answered within it,
    // beside this file's other tests and five more workers (at 400 ms a
    // loaded machine timed out that one too, and list counted 3).
    const { inbox, events } = await observedInbox(server, { requestTimeout: 2_000 });
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'list', times: 1, fault: { kind: 'slow', delayMs: 20_000 } });
    const started = performance.now();
    await inbox.expectMail({ subject: 'Confirm' });
    // The slow answer is due 20 s after the first call: a wait that sat it
    // out could not be done before then (the only wall-clock bound here,
    // and it is the one that tells the two apart).
    expect(performance.now() - started).toBeLessThan(20_000);
    const [failed] = eventsOf(events, 'check-failed');
    expect(failed!.error).toMatchObject({ slug: 'request_timeout' });
    expect(failed!.error.message).toContain('no complete answer within the request timeout of 2000 ms');
    expect(failed!.elapsedMs - failed!.startedMs).toBeGreaterThanOrEqual(1_990);
    // The call after it found the mail: one given up, one answered.
    expect(eventsOf(events, 'check')).toHaveLength(1);
    expect(server.stats(inbox.address)).toMatchObject({ list: 2, faulted: 1, message: 1, rateLimited: 0 });
  });

  it('never outlives its deadline by more than one request timeout', async () => {
    const { inbox, events } = await observedInbox(server, { requestTimeout: 800 });
    server.faults.inject({ address: inbox.address, route: 'list', times: 100, fault: { kind: 'slow', delayMs: 20_000 } });
    const started = performance.now();
    const error = (await inbox.expectMail({ subject: 'Never' }, { timeout: 3000 }).catch((e: unknown) => e)) as MailTimeoutError;
    const took = performance.now() - started;
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(took).toBeGreaterThanOrEqual(2900);
    // What the wait decided, which the load of the machine cannot change
    // (only make late): every request it sent, its start plus the timeout it
    // gave it, and every sleep it took end by the deadline plus one request
    // timeout; and it ended after its last failed request.
    const limit = 3000 + 800;
    const failed = eventsOf(events, 'check-failed');
    for (const check of failed) {
      const timeout = Number(/within the request timeout of (\d+) ms/.exec(check.error.message)?.[1]);
      expect(timeout).toBeLessThanOrEqual(800);
      expect(check.startedMs + timeout).toBeLessThanOrEqual(limit);
    }
    for (const sleep of eventsOf(events, 'sleep')) expect(sleep.elapsedMs + sleep.ms).toBeLessThanOrEqual(limit);
    expect(failed).toHaveLength(error.failedChecks);
    expect(events.at(-1)).toMatchObject({ type: 'wait-end', outcome: 'failed' });
    expect(error.checks).toBe(0);
    expect(error.failedChecks).toBeGreaterThanOrEqual(2);
    expect(error.message).toMatch(
      /\(0 checks, \d+ failed\)\. No check got an answer; the last failure: GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/mailbox\?.* failed: no complete answer within the request timeout/,
    );
  });

  it('names matching mail it saw but could not fetch before the deadline', async () => {
    const { inbox } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Your invoice' });
    server.faults.inject({ address: inbox.address, route: 'message', times: 1000, fault: { kind: 'status', status: 503 } });
    const error = (await inbox.expectMail({ subject: 'invoice' }, { timeout: 2000 }).catch((e: unknown) => e)) as MailTimeoutError;
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.unfetched.map((s) => s.subject)).toEqual(['Your invoice']);
    expect(error.message).toContain('Matching mail did arrive but could not be fetched in time: "Your invoice"');
    expect(error.message).toContain('503 unavailable');
  });

  it('gives a failing fetch a few attempts, then moves on to the next match instead of blocking it for the whole budget', async () => {
    const { inbox, events } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Invoice 1' });
    await send(server, inbox.address, { subject: 'Invoice 2' });
    // The next three fetches fail: all of them land on the older match.
    server.faults.inject({ address: inbox.address, route: 'message', times: 3, fault: { kind: 'status', status: 503 } });
    const first = await inbox.expectMail({ subject: 'Invoice' }, { timeout: 30_000 });
    expect(first.subject).toBe('Invoice 2');
    // Moved on within the one check that listed both, not at a later one.
    expect(eventsOf(events, 'check')).toHaveLength(1);
    // The older one is not lost: the next wait gets it.
    const second = await inbox.expectMail({ subject: 'Invoice' }, { timeout: 10_000 });
    expect(second.subject).toBe('Invoice 1');
    expect(server.stats(inbox.address)).toMatchObject({ message: 5, faulted: 3, rateLimited: 0 });
  });

  it('fails with its own message, naming the match, when the budget ran out before the match could be fetched', async () => {
    // A clock that jumps 10 s the moment a check has answered: the fetch of
    // the match then has no time left at all.
    let offset = 0;
    const clock = { now: () => performance.now() + offset, sleep: systemClock.sleep };
    const { inbox } = await observedInbox(server, {
      clock,
      watermark: null,
      onEvent: (event) => {
        if (event.type === 'check') offset += 10_000;
      },
    });
    await send(server, inbox.address, { subject: 'Your invoice' });
    const error = (await inbox.expectMail({ subject: 'invoice' }, { timeout: 2_000 }).catch((e: unknown) => e)) as MailTimeoutError;
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.message).toMatch(
      new RegExp(`^No mail matching subject ~ "invoice" arrived at ${inbox.address.replace(/[.]/g, '\\.')} within 2 s \\(1 check\\)\\.`),
    );
    expect(error.unfetched.map((s) => s.subject)).toEqual(['Your invoice']);
    expect(error.message).toContain('Matching mail did arrive but could not be fetched in time: "Your invoice"');
    expect(error.message).toContain('no time was left for the request');
    expect(server.stats(inbox.address).message).toBe(0);
  });

  it('honours a 429 on the watermark read too', async () => {
    const address = `reused-${Date.now()}@mailroom.test`;
    server.faults.inject({ address, route: 'list', times: 1, fault: { kind: 'rate_limit', retryAfter: 1 } });
    const started = performance.now();
    const inbox = await createInbox({ apiURL: server.apiURL, address });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
    expect(inbox.watermark).toBeNull();
    expect(server.stats(address)).toMatchObject({ list: 2, rateLimited: 1 });
  });
});
