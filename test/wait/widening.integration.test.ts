// Mail that arrives after the schedule started to widen (past 15 rounds at
// the one-second floor), through the real server and real SMTP. About 20 s
// of the loop's time, on a fake clock that the inbox and the server share
// (test/support/drive-clock.ts): every request is real, the sleeps between
// them cost nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { createInbox, type InboxEvent } from '../../src/index.js';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';
import { eventsOf, send, startTestServer } from '../support/server.js';

const clock = new FakeClock(Date.now());
let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer({ clock });
});
afterAll(async () => {
  await server?.close();
});

it('finds mail that arrives after the widening started, within the widened step', async () => {
  const events: InboxEvent[] = [];
  let sent: Promise<number> | undefined;
  let sending = false;
  const inbox = await createInbox({
    apiURL: server.apiURL,
    clock,
    onEvent: (event) => {
      events.push(event);
      // Round 15 is the first check after the flat stretch: the sleep after
      // it is the first widened one (2-3 s). The mail lands half a second in.
      if (event.type === 'check' && event.round === 15) {
        sent = clock
          .sleep(500)
          .then(() => (sending = true))
          .then(() => send(server, inbox.address, { subject: 'Slow signup' }))
          .then(() => clock.now())
          .finally(() => (sending = false));
      }
    },
  });
  const mail = await driveClock(clock, inbox.expectMail({ subject: 'Slow signup' }, { timeout: 60_000 }), () => sending);
  const foundAt = clock.now();
  expect(mail.subject).toBe('Slow signup');

  const checks = eventsOf(events, 'check');
  const starts = checks.map((c) => c.startedMs);
  const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
  // Fifteen rounds at the floor: 1 s plus up to 0.5 s of jitter (and the request).
  for (const gap of gaps.slice(0, 15)) {
    expect(gap).toBeGreaterThanOrEqual(1000);
    expect(gap).toBeLessThan(2000);
  }
  // Then the first widened step, 2-3 s, and the check after it finds the mail.
  expect(gaps[15]).toBeGreaterThanOrEqual(2000);
  expect(checks.at(-1)!.round).toBe(16);
  const sleptBeforeFinding = eventsOf(events, 'sleep').at(-1)!.ms;
  expect(sleptBeforeFinding).toBeGreaterThanOrEqual(2000);
  expect(sleptBeforeFinding).toBeLessThan(3000);
  expect(foundAt - (await sent!)).toBeLessThan(sleptBeforeFinding);
  // Requests: one per check (a fresh inbox reads no watermark); no refusals.
  expect(server.stats(inbox.address)).toMatchObject({ list: checks.length, rateLimited: 0, message: 1 });
}, 60_000);
