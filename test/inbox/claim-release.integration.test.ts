// Two waits on one inbox and one mail: the first claims it and lets go of it
// (its fetch was cut), and the second, whose look saw the mail claimed, takes
// it at once - no later look, no new mail needed. The interleaving is
// arranged step by step: a slow fault holds the first wait's fetch, the
// client's clock and the server's list budget run on one fake clock, and no
// step waits on time to assert anything.
import { afterEach, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { MailTimeoutError } from '../../src/index.js';
import { FakeClock } from '../support/fake-clock.js';
import { eventsOf, observedInbox, send, startTestServer } from '../support/server.js';

const running: MailroomServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (const end = performance.now() + 10_000; !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (performance.now() > end) throw new Error(`Timed out waiting until ${what}`);
  }
}

/** Turns a hang into a failure; the passing path never gets here. */
const stuck = (ms: number) => new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), ms).unref());

describe.each([
  ['the long-poll', { waitSlots: 8 }],
  ['the polling loop', { waitSlots: 0 }],
])('a claim released by a concurrent wait, with %s', (_name, serverOptions) => {
  it('is taken by the wait that passed over it, at once, without another look', async () => {
    const clock = new FakeClock();
    const offset = Date.now() - clock.now();
    const server = await startTestServer({ ...serverOptions, clock: { now: () => offset + clock.now() } });
    running.push(server);
    const { inbox, events } = await observedInbox(server, { clock });
    const checksOf = (id: number) => eventsOf(events, 'check').filter((e) => e.wait.id === id).length;

    // A's fetch will hang until A is cut.
    server.faults.inject({ address: inbox.address, route: 'message', fault: { kind: 'slow', delayMs: 60_000 } });
    await send(server, inbox.address, { subject: 'Code 1' });
    const cutA = new AbortController();
    const a = inbox.expectMail({ subject: 'Code' }, { timeout: 20_000, signal: cutA.signal }).catch((e: unknown) => e);
    await until(() => server.stats(inbox.address).message === 1, 'A claimed the mail and its fetch is at the server');

    // One second on: B's first look may go out (the floor of A's look).
    await clock.advance(1_005);
    const b = inbox.expectMail({ subject: 'Code' }, { timeout: 20_000 });
    await until(() => checksOf(2) === 1, "B's first look answered, listing the mail A holds");
    const looks = server.stats(inbox.address);
    const virtual = clock.now();

    cutA.abort(new Error('A was cut'));
    const got = await Promise.race([b, stuck(5_000)]);
    expect(got).toMatchObject({ subject: 'Code 1' });
    // Taken from the listing B already had: no look since, no time passed.
    expect(server.stats(inbox.address)).toMatchObject({ list: looks.list, wait: looks.wait, message: 2, rateLimited: 0 });
    expect(checksOf(2)).toBe(1);
    expect(clock.now()).toBe(virtual);
    const failure = await a;
    expect(failure).toBeInstanceOf(MailTimeoutError);
    expect(failure).toMatchObject({ cutShort: true });
  });
});
