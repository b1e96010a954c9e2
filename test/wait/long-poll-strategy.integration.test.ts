// The client's server-side wait against the real embedded server: the inbox
// discovers the long-poll and holds it instead of polling; every guarantee of
// the wait engine still holds; and each way it can go wrong falls back to the
// polling loop. Real SMTP in, real HTTP out, real time.
import { subscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { MailroomServer } from '../../src/server/index.js';
import { createInbox, MailroomApiError, MailroomClient, MailTimeoutError, UnexpectedMailError } from '../../src/index.js';
import { internalsOf } from '../../src/server/start-server.js';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';
import { eventsOf, observedInbox, send, startTestServer } from '../support/server.js';

let server: MailroomServer;
beforeAll(async () => {
  server = await startTestServer({ waitSlots: 64, catchAll: false });
});
afterAll(async () => {
  await server?.close();
});

/** Resolves once `condition()` holds, checked every 5 ms. */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const heldWaits = (s: MailroomServer) => internalsOf(s).waitSlots?.inUse ?? 0;

/** The `timeout` (ms) of every hold the client sent, in order, by address: what the wait decided. */
const holdsSent = new Map<string, number[]>();
subscribe('undici:request:create', (message) => {
  const { path } = (message as { request: { path: string } }).request;
  if (!path.startsWith('/api/v1/mailbox/wait?')) return;
  const params = new URLSearchParams(path.slice(path.indexOf('?') + 1));
  const address = params.get('address')!;
  holdsSent.set(address, [...(holdsSent.get(address) ?? []), Number(params.get('timeout')) * 1000]);
});

describe.concurrent('with the long-poll advertised', () => {
  it('holds the wait on the server: mail arriving mid-wait is found, one hold instead of polls', async () => {
    const { inbox, events } = await observedInbox(server);
    const waiting = inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 });
    await until(() => eventsOf(events, 'wait-start').length === 1 && server.stats(inbox.address).wait === 1, 'the hold reached the server');
    await send(server, inbox.address, { subject: 'Confirm your email' });
    const mail = await waiting;
    expect(mail.subject).toBe('Confirm your email');
    // the watermark read, one hold, one fetch; never a 429
    expect(server.stats(inbox.address)).toMatchObject({ list: 0, wait: 1, message: 1, rateLimited: 0 });
    expect(eventsOf(events, 'check')).toHaveLength(1);
    expect(eventsOf(events, 'sleep')).toHaveLength(0);
  });

  it('finds mail that was already there, and keeps the watermark: older mail never counts', async () => {
    const client = new MailroomClient({ apiURL: server.apiURL });
    const address = `old-mail-${Date.now()}@mailroom.test`;
    await send(server, address, { subject: 'Your code is 111111' });
    const inbox = await createInbox({ client, address });
    await send(server, address, { subject: 'Your code is 222222' });
    const mail = await inbox.expectMail({ subject: /code/ });
    expect(mail.subject).toBe('Your code is 222222');
    expect(server.stats(address)).toMatchObject({ list: 1, wait: 1, rateLimited: 0 });
  });

  it('filters on the client: RegExp and predicate filters see every arrival, and rejected mail is reported', async () => {
    const { inbox } = await observedInbox(server);
    const waiting = inbox.expectMail(
      {
        subject: /^Invoice #\d+$/,
        where: function fromBilling(s) {
          return s.from.includes('billing');
        },
      },
      { timeout: 20_000 },
    );
    await until(() => server.stats(inbox.address).wait === 1, 'the first hold reached the server');
    await send(server, inbox.address, { subject: 'Welcome', from: 'Acme <hello@acme.example>' });
    await until(() => server.stats(inbox.address).wait === 2, 'the second hold reached the server');
    await send(server, inbox.address, { subject: 'Invoice #7', from: 'Acme <hello@acme.example>' }); // wrong sender
    await send(server, inbox.address, { subject: 'Invoice #8', from: 'Billing <billing@acme.example>' });
    const mail = await waiting;
    expect(mail.subject).toBe('Invoice #8');
    expect(server.stats(inbox.address).rateLimited).toBe(0);
  });

  it('fails naming the address, the filter, the budget and the subjects it rejected, at the deadline', async () => {
    const { inbox, events } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Welcome to Acme' });
    const started = performance.now();
    const error = await inbox.expectMail({ subject: 'Invoice' }, { timeout: 2000 }).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(MailTimeoutError);
    const failure = error as MailTimeoutError;
    expect(failure.message).toContain(`No mail matching subject ~ "Invoice" arrived at ${inbox.address} within 2 s`);
    expect(failure.message).toContain('Seen and rejected: "Welcome to Acme"');
    expect(failure.rejected.map((s) => s.subject)).toEqual(['Welcome to Acme']);
    expect(failure.checks).toBeGreaterThanOrEqual(1);
    // The deadline governs: every hold the wait sent was to end by it (its
    // start plus the timeout it asked for, rounded up to the millisecond),
    // and it held no more after the last one answered. That is what the wait
    // decided; the load of the machine can only make it late.
    expect(elapsed).toBeGreaterThanOrEqual(1990);
    const holds = holdsSent.get(inbox.address) ?? [];
    const looks = [...eventsOf(events, 'check'), ...eventsOf(events, 'check-failed')].sort((a, b) => a.startedMs - b.startedMs);
    expect(holds).toHaveLength(looks.length);
    looks.forEach((look, i) => expect(look.startedMs + holds[i]!).toBeLessThanOrEqual(2000 + 1));
    expect(server.stats(inbox.address)).toMatchObject({ wait: holds.length, rateLimited: 0 });
  });

  it('returns each mail once: two waits for the same subject get the first and the second, in order', async () => {
    const { inbox } = await observedInbox(server);
    const first = inbox.expectMail({ subject: 'Code' }, { timeout: 20_000 });
    await until(() => server.stats(inbox.address).wait === 1, 'the hold reached the server');
    await send(server, inbox.address, { subject: 'Code 1' });
    await send(server, inbox.address, { subject: 'Code 2' });
    expect((await first).subject).toBe('Code 1');
    expect((await inbox.expectMail({ subject: 'Code' }, { timeout: 20_000 })).subject).toBe('Code 2');
    const [a, b] = await Promise.all([
      inbox.expectMail({ subject: 'Again' }, { timeout: 20_000 }),
      inbox.expectMail({ subject: 'Again' }, { timeout: 20_000 }),
      send(server, inbox.address, { subject: 'Again 1' }).then(() => send(server, inbox.address, { subject: 'Again 2' })),
    ]);
    expect(new Set([a.subject, b.subject])).toEqual(new Set(['Again 1', 'Again 2']));
    expect(server.stats(inbox.address).rateLimited).toBe(0);
  });

  it('keeps the list floor after a hold: a list call right after a wait earns no 429', async () => {
    const { inbox } = await observedInbox(server);
    const waiting = inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 });
    await until(() => server.stats(inbox.address).wait === 1, 'the hold reached the server');
    await send(server, inbox.address, { subject: 'Confirm' });
    await waiting;
    const listed = await inbox.messages();
    expect(listed.map((s) => s.subject)).toEqual(['Confirm']);
    expect(server.stats(inbox.address)).toMatchObject({ list: 1, rateLimited: 0 });
  });

  it('expectNoMail: passes a quiet period that saw only other mail, and fails the moment matching mail arrives', async () => {
    const { inbox, events } = await observedInbox(server);
    const quiet = inbox.expectNoMail({ subject: 'Password reset' }, { within: 1500 });
    await until(() => server.stats(inbox.address).wait >= 1, 'the hold reached the server');
    await send(server, inbox.address, { subject: 'Newsletter' });
    await quiet;

    const noisy = inbox.expectNoMail({ subject: 'Password reset' }, { within: 20_000 }).catch((e: unknown) => e);
    const before = server.stats(inbox.address).wait;
    // Its first hold answers at once with the Newsletter; the one after it is held.
    const answered = () => eventsOf(events, 'check').filter((e) => e.wait.id === 2).length;
    await until(() => answered() > 0 && server.stats(inbox.address).wait === before + answered() + 1, 'a hold is held at the server');
    // Woken by the arrival, not by a poll: no request after the mail was
    // sent (a poll needs one to see it), and the hold it was waiting in
    // had asked for most of the 20 s, not for a poll's second or so.
    const sentAt = server.stats(inbox.address);
    await send(server, inbox.address, { subject: 'Password reset' });
    const error = await noisy;
    expect(error).toBeInstanceOf(UnexpectedMailError);
    expect((error as Error).message).toContain('"Password reset"');
    expect(server.stats(inbox.address)).toMatchObject({ wait: sentAt.wait, list: sentAt.list, rateLimited: 0 });
    expect(holdsSent.get(inbox.address)!.at(-1)).toBeGreaterThan(10_000);
  });

  it('fetches again a match whose fetch failed, without losing it', async () => {
    const { inbox, events } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'message', times: 1, fault: { kind: 'status', status: 503 } });
    const mail = await inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 });
    expect(mail.subject).toBe('Confirm');
    expect(server.stats(inbox.address)).toMatchObject({ faulted: 1, rateLimited: 0 });
    expect(eventsOf(events, 'check').length).toBeGreaterThanOrEqual(1);
  });

  it('honours a 429 on the long-poll: sleeps exactly Retry-After, counts a refusal, not a failure, and holds again', async () => {
    // On the inbox's fake clock, so "exactly" is exact; the injected 429
    // spends no list budget, and the mail is there, so no hold is held.
    const clock = new FakeClock();
    const { inbox, events } = await observedInbox(server, { clock });
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'wait', fault: { kind: 'rate_limit', retryAfter: 2 } });
    const mail = await driveClock(clock, inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 }));
    expect(mail.subject).toBe('Confirm');
    const [refused] = eventsOf(events, 'refused');
    const checks = eventsOf(events, 'check');
    expect(refused).toMatchObject({ retryAfterMs: 2000 });
    expect(eventsOf(events, 'check-failed')).toEqual([]);
    expect(checks).toHaveLength(1);
    expect(eventsOf(events, 'sleep').map((e) => [e.reason, e.ms])).toEqual([['retry-after', 2000]]);
    expect(checks[0]!.startedMs - refused!.elapsedMs).toBe(2000);
    // The refused hold, then the one that answered; no list call but the watermark read, and no second 429.
    expect(server.stats(inbox.address)).toMatchObject({ list: 0, wait: 2, rateLimited: 1, message: 1 });
  });

  it('fails after 429s on the long-poll naming them as refusals, not as failed checks', async () => {
    const { inbox } = await observedInbox(server);
    server.faults.inject({ address: inbox.address, route: 'any', times: 100, fault: { kind: 'rate_limit', retryAfter: 1 } });
    const error = (await inbox.expectMail({ subject: 'Never' }, { timeout: 2500 }).catch((e: unknown) => e)) as MailTimeoutError;
    expect(error).toBeInstanceOf(MailTimeoutError);
    expect(error.failedChecks).toBe(0);
    expect(error.lastError).toBeUndefined();
    expect(error.refusals).toBeGreaterThanOrEqual(2);
    expect(error.message).toMatch(/within 2\.5 s \(0 checks, \d+ refused with 429\)\./);
    // Retry-After was honoured: one refused call per second, each counted once.
    expect(server.stats(inbox.address).rateLimited).toBe(error.refusals);
    expect(error.refusals).toBeLessThanOrEqual(3);
  });

  it('stops at once on a slug that means stop (unknown_domain), like the polling loop', async () => {
    // "At once" on the inbox's own clock: no sleep, one hold asked and refused.
    const clock = new FakeClock();
    const inbox = await createInbox({ apiURL: server.apiURL, address: 'someone@nowhere.example', watermark: null, clock });
    const error = await driveClock(
      clock,
      inbox.expectMail({ subject: 'x' }, { timeout: 20_000 }).catch((e: unknown) => e),
    );
    expect(clock.sleeps).toEqual([]);
    expect(server.stats('someone@nowhere.example')).toMatchObject({ wait: 1, list: 0 });
    expect(error).toBeInstanceOf(MailroomApiError);
    expect(error).toMatchObject({ slug: 'unknown_domain' });
  });
});

describe.concurrent('falling back to the polling loop', () => {
  it('polls when the service does not advertise a long-poll', async () => {
    const plain = await startTestServer(); // waitSlots: 0
    try {
      const { inbox, events } = await observedInbox(plain);
      await send(plain, inbox.address, { subject: 'Confirm' });
      expect((await inbox.expectMail({ subject: 'Confirm' })).subject).toBe('Confirm');
      expect(plain.stats(inbox.address)).toMatchObject({ list: 1, wait: 0, rateLimited: 0 });
      expect(eventsOf(events, 'check-failed')).toHaveLength(0);
    } finally {
      await plain.close();
    }
  });

  it('polls when told not to (serverWait: false), even when the service advertises one', async () => {
    const { inbox } = await observedInbox(server, { serverWait: false });
    await send(server, inbox.address, { subject: 'Confirm' });
    expect((await inbox.expectMail({ subject: 'Confirm' })).subject).toBe('Confirm');
    expect(server.stats(inbox.address)).toMatchObject({ list: 1, wait: 0 });
  });

  it('polls when every wait slot is taken (503 too_many_waits), and still finds the mail', async () => {
    const small = await startTestServer({ waitSlots: 1 });
    try {
      // Someone else holds the only slot.
      const squatter = request(`${small.apiURL}/api/v1/mailbox/wait?address=squatter@mailroom.test&timeout=25`);
      await until(() => heldWaits(small) === 1, 'the slot is taken');
      const { inbox, events } = await observedInbox(small);
      await send(small, inbox.address, { subject: 'Confirm' });
      expect((await inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 })).subject).toBe('Confirm');
      const [failed] = eventsOf(events, 'check-failed');
      expect(failed?.error).toMatchObject({ slug: 'too_many_waits', status: 503 });
      expect(small.stats(inbox.address)).toMatchObject({ wait: 1, list: 1, rateLimited: 0 });
      await small.close();
      await squatter.catch(() => {});
    } finally {
      await small.close();
    }
  });

  it('polls after a 5xx from the long-poll', async () => {
    const { inbox, events } = await observedInbox(server);
    server.faults.inject({ address: inbox.address, route: 'wait', fault: { kind: 'status', status: 502 } });
    const waiting = inbox.expectMail({ subject: 'Confirm' }, { timeout: 20_000 });
    await until(() => eventsOf(events, 'check-failed').length === 1, 'the long-poll failed');
    await send(server, inbox.address, { subject: 'Confirm' });
    expect((await waiting).subject).toBe('Confirm');
    expect(eventsOf(events, 'check-failed')[0]!.error).toMatchObject({ slug: 'unavailable', status: 502 });
    // The hold may have looked before its 5xx, so the first list call keeps
    // the floor from it: whether it comes before or after the send is not
    // the point; that polling found the mail without a 429 is.
    expect(server.stats(inbox.address)).toMatchObject({ wait: 1, rateLimited: 0 });
    expect(server.stats(inbox.address).list).toBeGreaterThanOrEqual(1);
  });

  it('polls after the long-poll answer is lost to a reset, and stays exactly once', async () => {
    const { inbox } = await observedInbox(server);
    await send(server, inbox.address, { subject: 'Code 1' });
    server.faults.inject({ address: inbox.address, route: 'wait', fault: { kind: 'reset' } });
    const first = await inbox.expectMail({ subject: 'Code' }, { timeout: 20_000 });
    expect(first.subject).toBe('Code 1');
    await send(server, inbox.address, { subject: 'Code 2' });
    expect((await inbox.expectMail({ subject: 'Code' }, { timeout: 20_000 })).subject).toBe('Code 2');
    expect(server.stats(inbox.address)).toMatchObject({ faulted: 1, message: 2, rateLimited: 0 });
  });

  it('gives up on a hold that never answers at its deadline plus one request timeout, and says why', async () => {
    // The hold may last the whole 3 s budget, so its request gives up at 3.5 s;
    // the answer would come at 5 s. The budget is spent by then: the wait fails.
    const { inbox, events } = await observedInbox(server, { requestTimeout: 500 });
    await send(server, inbox.address, { subject: 'Confirm' });
    server.faults.inject({ address: inbox.address, route: 'wait', fault: { kind: 'slow', delayMs: 5000 } });
    const started = performance.now();
    const error = await inbox.expectMail({ subject: 'Confirm' }, { timeout: 3000 }).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(MailTimeoutError);
    const timedOut =
      /within 3 s \(0 checks, 1 failed\)\. No check got an answer; the last failure: GET .*\/api\/v1\/mailbox\/wait\?.* failed: no complete answer within the request timeout of (\d+) ms/.exec(
        (error as Error).message,
      );
    expect(timedOut, (error as Error).message).not.toBeNull();
    expect(elapsed).toBeGreaterThanOrEqual(3400);
    // The one hold was to last no longer than the deadline, and its request
    // to end no later than the deadline plus one request timeout: what the
    // wait decided when it sent it (a few ms into the wait, so the numbers
    // in the request and the message are a little under 3,000 and 3,500).
    // Nothing after it ("1 failed", no check). The plan, not a stopwatch;
    // the elapsed time above shows it held until then.
    const [failed] = eventsOf(events, 'check-failed');
    const holds = holdsSent.get(inbox.address) ?? [];
    expect(holds).toHaveLength(1);
    expect(holds[0]).toBeGreaterThan(2_500);
    expect(failed!.startedMs + holds[0]!).toBeLessThanOrEqual(3000 + 1);
    expect(failed!.startedMs + Number(timedOut![1])).toBeLessThanOrEqual(3000 + 500 + 1);
    expect(eventsOf(events, 'check-failed')[0]!.error).toMatchObject({ slug: 'request_timeout' });
    expect(server.stats(inbox.address).rateLimited).toBe(0);
  });

  it('polls a service whose /healthz says nothing about features, or is not there', async () => {
    const answers: Array<[number, string]> = [
      [404, '{"error":"not_found","message":"no"}'],
      [200, '{"ok":true}'],
      [200, 'not json'],
      [200, '{"ok":true,"features":{"wait":"http://elsewhere/wait"}}'],
    ];
    for (const [status, body] of answers) {
      const seen: string[] = [];
      const stub: Server = createServer((req, res) => {
        seen.push(`${req.method} ${req.url?.split('?')[0]}`);
        if (req.url === '/healthz') {
          res.writeHead(status, { 'content-type': 'application/json' }).end(body);
        } else {
          const address = new URL(req.url ?? '/', 'http://stub').searchParams.get('address');
          res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ address, messages: [] }));
        }
      });
      await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
      try {
        const apiURL = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
        const client = new MailroomClient({ apiURL });
        expect(await client.features()).toMatchObject({ wait: undefined, paging: false });
        // And a wait on it polls: its one check is a list call, never a hold.
        seen.length = 0;
        const inbox = await createInbox({ apiURL, address: 'someone@mailroom.test', watermark: null });
        const error = await inbox.expectMail({}, { timeout: 0 }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MailTimeoutError);
        expect({ body, message: (error as Error).message }).toMatchObject({
          body,
          message: expect.stringContaining('within 0 ms (1 check). Nothing arrived at all.'),
        });
        // Its one look is a list call, never a hold; after it, only what the failure reads to say why nothing arrived (the features).
        expect({ body, seen: seen.slice(0, 2) }).toEqual({ body, seen: ['GET /healthz', 'GET /api/v1/mailbox'] });
        expect(seen.slice(2).filter((line) => line !== 'GET /healthz')).toEqual([]);
      } finally {
        stub.close();
        stub.closeAllConnections();
      }
    }
  });
});
