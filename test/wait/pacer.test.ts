import { describe, expect, it } from 'vitest';
import { ListPacer, PACING_GUARD_MS, TOO_LATE, pacerFor } from '../../src/wait/pacer.js';
import { FakeClock } from '../support/fake-clock.js';

const FLOOR = 1000 + PACING_GUARD_MS;

describe('ListPacer', () => {
  it('lets the first call go at once and spaces the next from when the previous one settled', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    const starts: number[] = [];
    const call = (duration: number) => async () => {
      starts.push(clock.now());
      await clock.sleep(duration);
      return 'ok';
    };
    const t0 = clock.now();
    expect(await clock.run(pacer.run(call(40)))).toBe('ok');
    expect(await clock.run(pacer.run(call(0)))).toBe('ok');
    expect(starts[0]).toBe(t0);
    // The first call took 40 ms; the floor counts from its answer, not its start.
    expect(starts[1]).toBe(t0 + 40 + FLOOR);
  });

  it('serialises concurrent callers, each a floor after the previous answer', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    const starts: number[] = [];
    const call = async () => {
      starts.push(clock.now());
      await clock.sleep(10);
      return starts.length;
    };
    const t0 = clock.now();
    const results = await clock.run(Promise.all([pacer.run(call), pacer.run(call), pacer.run(call)]));
    expect(results.sort()).toEqual([1, 2, 3]);
    expect(starts).toEqual([t0, t0 + 10 + FLOOR, t0 + 2 * (10 + FLOOR)]);
  });

  it('counts a failed call against the floor too (the server may have counted it)', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    const t0 = clock.now();
    await expect(clock.run(pacer.run(async () => Promise.reject(new Error('reset'))))).rejects.toThrow('reset');
    let started = Number.NaN;
    await clock.run(pacer.run(async () => void (started = clock.now())));
    expect(started).toBe(t0 + FLOOR);
  });

  it('gives up with TOO_LATE, without calling, when the floor ends after notAfter', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    await clock.run(pacer.run(async () => 1));
    let called = false;
    const answer = await clock.run(pacer.run(async () => (called = true), { notAfter: clock.now() + 500 }));
    expect(answer).toBe(TOO_LATE);
    expect(called).toBe(false);
  });

  it('returns TOO_LATE when the signal aborts during the wait for the turn', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    await clock.run(pacer.run(async () => 1));
    const controller = new AbortController();
    const pending = pacer.run(async () => 'called', { signal: controller.signal });
    await clock.advance(300);
    controller.abort();
    expect(await pending).toBe(TOO_LATE);
  });

  it("counts a hold's look when it starts: at once when the floor has passed, else at the floor, where the service defers it", async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    const t0 = clock.now();
    expect((await pacer.holdStarts()).lookAt).toBe(t0);
    expect(pacer.earliestStart()).toBe(t0 + FLOOR);
    // A second hold right away: the service looks at the floor of the first.
    expect((await pacer.holdStarts()).lookAt).toBe(t0 + FLOOR);
    let started = Number.NaN;
    await clock.run(pacer.run(async () => void (started = clock.now())));
    expect(started).toBe(t0 + 2 * FLOOR);
  });

  it('lets a list call in flight settle before counting the look, and un-counts a hold refused before any look', async () => {
    const clock = new FakeClock();
    const pacer = new ListPacer(clock);
    const t0 = clock.now();
    const listing = pacer.run(() => clock.sleep(30));
    await clock.advance(0); // the list call has its turn and is in flight
    const look = pacer.holdStarts();
    await clock.run(listing);
    expect((await look).lookAt).toBe(t0 + 30 + FLOOR);
    const fresh = new ListPacer(clock);
    const { unlook } = await fresh.holdStarts();
    unlook();
    expect(fresh.earliestStart()).toBe(Number.NEGATIVE_INFINITY);
  });

  it('hands out one pacer per clock and address key', () => {
    const clock = new FakeClock();
    expect(pacerFor(clock, 'a')).toBe(pacerFor(clock, 'a'));
    expect(pacerFor(clock, 'a')).not.toBe(pacerFor(clock, 'b'));
    expect(pacerFor(new FakeClock(), 'a')).not.toBe(pacerFor(clock, 'a'));
  });
});
