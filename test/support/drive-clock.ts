// Virtual time for a test whose requests cross real sockets (the embedded
// server, real SMTP): the fake clock jumps to its next timer only while no
// real request is in flight, so the loop's sleeps cost no real time and each
// of its requests still gets its real answer before time moves on. Undici's
// diagnostics channels say which HTTP requests are in flight; other real
// work (an SMTP send) the test names with `busy`. The server under test is
// given the same clock, so its list budget sees the same time as the client.
//
// Only the current test file's requests count. The channels see every
// request in the process, and a Vitest worker runs file after file
// (isolate: false): a request another file left open (a stream, a hold on a
// server that outlives its file) stayed in flight here for good, and a later
// file's clock never moved again. A flake run (s33) timed out at 60 s that
// way in test/wait/widening.integration.test.ts, which takes half a second.
// Per file, not per test: the driven tests run in describe.concurrent
// blocks, where the clock must wait for every one of the file's requests.
import { subscribe } from 'node:diagnostics_channel';
import { setTimeout as delay } from 'node:timers/promises';
import { expect } from 'vitest';
import type { FakeClock } from './fake-clock.js';

/** The test file that is running. */
const currentFile = (): string => expect.getState().testPath ?? '';

/** Requests in flight, each with the test file it was made in. */
const inFlight = new Map<unknown, string>();
subscribe('undici:request:create', (message) => void inFlight.set((message as { request: unknown }).request, currentFile()));
const settled = (message: unknown) => void inFlight.delete((message as { request: unknown }).request);
subscribe('undici:request:trailers', settled);
subscribe('undici:request:error', settled);

/** How long nothing may be in flight or scheduled while `promise` is pending before that counts as a deadlock. */
const STUCK_MS = 5_000;

/** Drives `clock` from timer to timer, never while real work is in flight, until `promise` settles. */
export async function driveClock<T>(clock: FakeClock, promise: Promise<T>, busy: () => boolean = () => false): Promise<T> {
  const file = currentFile();
  const mine = () => {
    for (const madeIn of inFlight.values()) if (madeIn === file) return true;
    return false;
  };
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  let idleSince = performance.now();
  for (;;) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (done) return promise;
    const working = busy() || mine();
    const due = working ? undefined : clock.nextDue();
    if (due === undefined) {
      if (working) idleSince = performance.now();
      else if (performance.now() - idleSince > STUCK_MS)
        throw new Error('driveClock: the promise is pending, nothing is in flight and nothing is scheduled (deadlock)');
      await delay(1);
      continue;
    }
    await clock.advance(Math.max(0, due - clock.now()));
    idleSince = performance.now();
  }
}
