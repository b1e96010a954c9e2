// A hold in flight and the address's other list calls, on one fake clock:
// the client's and the server's list budget both run on virtual time, so the
// interleaving is exact and nothing depends on how fast the machine is.
// Real sockets, real server.
import { afterEach, describe, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { FakeClock } from '../support/fake-clock.js';
import { observedInbox, startTestServer } from '../support/server.js';

const running: MailroomServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

/** A server with its long-poll whose wall clock is `clock`'s virtual time. */
async function serverOn(clock: FakeClock): Promise<MailroomServer> {
  const offset = Date.now() - clock.now();
  const server = await startTestServer({ waitSlots: 8, clock: { now: () => offset + clock.now() } });
  running.push(server);
  return server;
}

/** Resolves once `condition()` holds (real time, checked every 5 ms): synchronisation only, never an assertion. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (const end = performance.now() + 10_000; !condition(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (performance.now() > end) throw new Error(`Timed out waiting until ${what}`);
  }
}

describe('a hold in flight counts on the pacer', () => {
  it("a list call on the address while a hold is held waits out the floor from the hold's look instead of earning a 429", async () => {
    const clock = new FakeClock();
    const server = await serverOn(clock);
    const { inbox } = await observedInbox(server, { clock });
    const controller = new AbortController();
    const waiting = inbox.expectMail({ subject: 'Never' }, { timeout: 20_000, signal: controller.signal }).catch((e: unknown) => e);
    // The hold reached the server, which made its paid look (a list call) on arrival.
    await until(() => server.stats(inbox.address).wait === 1, 'the hold reached the server');

    const listing = inbox.messages();
    await until(() => clock.sleeps.length > 0, 'the list call waits on the fake clock');
    // It waits for the floor of the hold's look, on the client: nothing was sent.
    expect(clock.sleeps[0]).toBeGreaterThanOrEqual(1000);
    expect(server.stats(inbox.address)).toMatchObject({ list: 0, rateLimited: 0 });
    await clock.advance(clock.sleeps[0]!);
    expect(await listing).toEqual([]);
    expect(server.stats(inbox.address)).toMatchObject({ wait: 1, list: 1, rateLimited: 0 });

    controller.abort(new Error('test over'));
    expect(await waiting).toMatchObject({ name: 'MailTimeoutError' });
  });
});
