// The server's mail checks run in threads of their own (src/server/mail-checks/
// check-threads.ts), real worker threads here: a check answers the report
// `mail.check()` gives; one past its deadline, or whose caller hangs up, is
// refused and its thread ended (the next check starts another); and a burst
// past the threads and the line waiting for them is refused at once.
import { afterEach, describe, expect, it } from 'vitest';
import { checkMail } from '../../src/checks/run-checks.js';
import { checkReportToWire } from '../../src/checks/wire.js';
import { Refusal } from '../../src/contract/refusal.js';
import { CheckThreads, MAX_CHECK_THREADS, MAX_WAITING_CHECKS } from '../../src/server/mail-checks/check-threads.js';

const HTML = '<p>Hi <img src="https://acme.example/logo.png"></p>';
const SOURCE = Buffer.from(
  ['From: a@example.com', 'To: b@mailroom.test', 'Subject: A mail', 'MIME-Version: 1.0', 'Content-Type: text/html; charset=utf-8', '', HTML, ''].join('\r\n'),
);
const request = { source: SOURCE, size: SOURCE.length, links: false, allowPrivate: [] };

const pools: CheckThreads[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});
function pool(deadlineMs = 30_000): CheckThreads {
  const made = new CheckThreads({ deadlineMs });
  pools.push(made);
  return made;
}

async function refusalOf(answer: Promise<unknown>): Promise<Refusal> {
  const error = await answer.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(Refusal);
  return error as Refusal;
}

describe('the check threads', () => {
  it('answers the report mail.check() gives, and keeps the thread for the next check', async () => {
    const threads = pool();
    const expected = checkReportToWire(await checkMail({ html: HTML, text: '', size: SOURCE.length, subject: 'A mail' }, { skip: ['links', 'accessibility'] }));
    expect(await threads.check(request, new AbortController().signal)).toEqual(expected);
    expect(expected.problems.map((p) => p.check)).toEqual(['images', 'text']);
    expect(threads.threads).toBe(1);
  });

  it('ends the thread of a check whose caller hung up, and starts another for the next check', async () => {
    const threads = pool();
    const hangUp = new AbortController();
    const answer = threads.check(request, hangUp.signal);
    expect(threads.threads).toBe(1);
    hangUp.abort();
    expect(await refusalOf(answer)).toMatchObject({
      status: 503,
      slug: 'unavailable',
      message: 'The checks were stopped: the caller hung up or the server is closing',
    });
    expect(threads.threads).toBe(0);
    expect((await threads.check(request, new AbortController().signal)).ok).toBe(false);
    expect(threads.threads).toBe(1);
  });

  it('refuses a check past its deadline with checks_timeout, naming the deadline, and ends its thread', async () => {
    const threads = pool(1);
    const refusal = await refusalOf(threads.check(request, new AbortController().signal));
    expect(refusal).toMatchObject({ status: 503, slug: 'checks_timeout' });
    expect(refusal.message).toBe(
      "The checks of this message did not finish within 1 ms (the server's checksTimeout) and were stopped; a busy server may need a longer timeout, and the links check waits on every link's host",
    );
    expect(threads.threads).toBe(0);
  });

  it(`runs ${MAX_CHECK_THREADS} checks at once with ${MAX_WAITING_CHECKS} waiting, refuses the next at once, and refuses them all on close`, async () => {
    const threads = pool();
    const signal = new AbortController().signal;
    const admitted = Array.from({ length: MAX_CHECK_THREADS + MAX_WAITING_CHECKS }, () => refusalOf(threads.check(request, signal)));
    const refused = await refusalOf(threads.check(request, signal));
    expect(refused).toMatchObject({
      status: 503,
      slug: 'unavailable',
      message: 'The server is checking 2 messages already, with 8 more waiting: try again in a moment',
      headers: { 'retry-after': '1' },
    });
    expect(threads.threads).toBe(MAX_CHECK_THREADS);
    await threads.close();
    for (const refusal of await Promise.all(admitted)) expect(refusal.slug).toBe('unavailable');
    expect(threads.threads).toBe(0);
    expect((await refusalOf(threads.check(request, signal))).message).toBe('The checks were stopped: the caller hung up or the server is closing');
  });
});
