// Mail that arrives after the schedule started to widen (past 15 rounds at
// the one-second floor). Real time, about 20 s: in a file of its own so it
// runs beside the others.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { eventsOf, observedInbox, send, startTestServer } from './support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

it('finds mail that arrives after the widening started, within one widened step', async () => {
  const { inbox, events } = await observedInbox(server);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // let the watermark read's floor pass
  let sentAt = Number.NaN;
  const started = performance.now();
  setTimeout(() => {
    void send(server, inbox.address, { subject: 'Slow signup' }).then(() => (sentAt = performance.now()));
  }, 19_000);
  const mail = await inbox.expectMail({ subject: 'Slow signup' }, { timeout: 45_000 });
  const foundAt = performance.now();
  expect(mail.subject).toBe('Slow signup');

  const checks = eventsOf(events, 'check');
  const starts = checks.map((c) => c.startedMs);
  const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
  // Fifteen rounds at 1-1.5 s (plus request time), then wider.
  for (const gap of gaps.slice(0, 15)) {
    expect(gap).toBeGreaterThanOrEqual(1000);
    expect(gap).toBeLessThan(1700);
  }
  expect(gaps[15]).toBeGreaterThanOrEqual(2000);
  expect(checks.at(-1)!.round).toBeGreaterThanOrEqual(15);
  // The widest step reached by then is 4 s (+ up to 2 s of jitter).
  expect(foundAt - sentAt).toBeLessThan(6500);
  expect(foundAt - started).toBeGreaterThan(19_000);
  // Requests: the watermark read plus one per check; no refusals.
  expect(server.stats(inbox.address)).toMatchObject({ list: checks.length + 1, rateLimited: 0, message: 1 });
}, 60_000);
