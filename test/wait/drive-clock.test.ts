// The harness that drives a fake clock across real requests
// (test/support/drive-clock.ts): it waits for the running file's requests,
// and only for them. A Vitest worker runs file after file, and a request
// another file left open used to hold every later file's clock still.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';

// A server that never answers: a request to it stays in flight until it closes.
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A request made while Vitest says `file` is running, left in flight. */
function leftOpenBy(file: string): Promise<unknown> {
  const running = expect.getState().testPath;
  expect.setState({ testPath: file });
  try {
    return request(url).catch((error: unknown) => error);
  } finally {
    expect.setState({ testPath: running });
  }
}

it('moves the clock past a request another test file left in flight', { timeout: 10_000 }, async () => {
  void leftOpenBy('/elsewhere/other.test.ts');
  const clock = new FakeClock(0);
  const started = performance.now();
  await driveClock(clock, clock.sleep(60_000));
  expect(clock.now()).toBe(60_000);
  expect(performance.now() - started).toBeLessThan(5_000);
});

it("holds the clock while this file's own request is in flight", async () => {
  const clock = new FakeClock(0);
  const pending = request(url).catch(() => 'closed');
  const slept = clock.sleep(1_000);
  // the driver asks `busy` once a turn: twenty turns with the request in flight, and the clock has not moved
  let turns = 0;
  const driven = driveClock(clock, slept, () => (turns++, false));
  while (turns < 20 && clock.now() === 0) await new Promise((resolve) => setImmediate(resolve));
  expect(clock.now()).toBe(0);
  server.closeAllConnections();
  await pending;
  await driven;
  expect(clock.now()).toBe(1_000);
});
