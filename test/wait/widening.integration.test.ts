// Mail that arrives after the schedule started to widen (past 15 rounds at
// the one-second floor). Real time, about 20 s: in a file of its own so it
// runs beside the others.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MailroomServer } from '../../src/server/index.js';
import { createInbox, type InboxEvent } from '../../src/index.js';
import { eventsOf, send, startTestServer } from '../support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

it('finds mail that arrives after the widening started, within the widened step', async () => {
  const events: InboxEvent[] = [];
  let sent: Promise<number> | undefined;
  const inbox = await createInbox({
    apiURL: server.apiURL,
    onEvent: (event) => {
      events.push(event);
      // Round 15 is the first check after the flat stretch: the sleep after
      // it is the first widened one (2-3 s). The mail lands half a second in.
      if (event.type === 'check' && event.round === 15) {
        sent = new Promise((resolve) => setTimeout(resolve, 500))
          .then(() => send(server, inbox.address, { subject: 'Slow signup' }))
          .then(() => performance.now());
      }
    },
  });
  const mail = await inbox.expectMail({ subject: 'Slow signup' }, { timeout: 60_000 });
  const foundAt = performance.now();
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
