// The demo app's outbound queue against the SMTP deferral lab: the embedded
// server greylists, throttles, defers and refuses the app's mail per address
// and logs every attempt, and mailroom's own matchers judge the app. Real
// SMTP and HTTP throughout; the schedules are asserted from the server's
// log (lower bounds only) and, for the exact numbers, on backoff.ts with a
// pinned random source.
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import { matchBackedOff, matchRetried } from '../../src/runner/smtp-matchers.js';
import { startServer, type MailroomServer } from '../../src/server/index.js';
import { DEFAULT_RETRY, retryDelay, startDemoApp, type DemoApp, type DemoAppOptions, type RetryPolicy } from '../../fixtures/demo-app/index.js';
import { getJson, postForm, postJson } from './context.js';

const running: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of running.splice(0).reverse()) await thing.close();
});

const quiet = () => {};

async function lab(retry: Partial<RetryPolicy>, options: Partial<DemoAppOptions> = {}): Promise<{ server: MailroomServer; app: DemoApp; inbox: Inbox }> {
  const server = await startServer({ smtpPort: 0, httpPort: 0, messagePerSecond: Infinity, logger: { info: quiet, warn: quiet, error: quiet } });
  running.push(server);
  const app = await startDemoApp({ smtp: { host: '127.0.0.1', port: server.smtpPort }, retry, ...options });
  running.push(app);
  const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0], prefix: 'queue', timeout: 15_000 });
  return { server, app, inbox };
}

type DeliveryJson = { subject: string; state: string; attempts: Array<{ reply: string; ok: boolean }>; reason: string | null; next_attempt_at: string | null };

async function deliveriesOf(app: DemoApp, email: string): Promise<DeliveryJson[]> {
  return (await getJson(`${app.url}/api/deliveries?email=${encodeURIComponent(email)}`)).deliveries as DeliveryJson[];
}

async function settled(app: DemoApp, email: string): Promise<DeliveryJson[]> {
  await expect
    .poll(async () => (await deliveriesOf(app, email)).every((d) => ['delivered', 'bounced', 'failed'].includes(d.state)), { timeout: 20_000 })
    .toBe(true);
  return deliveriesOf(app, email);
}

describe('backoff', () => {
  it('doubles from the first wait up to the cap, and jitter only lengthens it', () => {
    const policy: RetryPolicy = { ...DEFAULT_RETRY, firstDelayMs: 1_000, factor: 2, maxDelayMs: 8_000, jitter: 0.25 };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelay(policy, n, () => 0))).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(policy, n, () => 0.999))).toEqual([1_250, 2_500, 4_999, 9_998, 9_998]);
    // Two mails deferred together come back apart.
    expect(retryDelay(policy, 1, () => 0.1)).not.toBe(retryDelay(policy, 1, () => 0.7));
  });

  it('refuses a malformed policy, naming the key', async () => {
    const smtp = { host: '127.0.0.1', port: 2525 };
    await expect(startDemoApp({ smtp, retry: { attempt: 3 } as never })).rejects.toThrow(
      new TypeError('Unknown `retry` option `attempt`; expected one of attempts, firstDelayMs, factor, maxDelayMs, jitter, giveUpAfterMs'),
    );
    await expect(startDemoApp({ smtp, retry: { attempts: 0 } })).rejects.toThrow(
      new TypeError('Expected `retry.attempts` to be a whole number of attempts, at least 1, got 0'),
    );
    await expect(startDemoApp({ smtp, retry: { firstDelayMs: 500, maxDelayMs: 100 } })).rejects.toThrow(
      new TypeError('Expected `retry.maxDelayMs` to be a number of milliseconds, at least firstDelayMs (500), got 100'),
    );
    await expect(startDemoApp({ smtp, retry: { jitter: 2 } })).rejects.toThrow(new TypeError('Expected `retry.jitter` to be a fraction from 0 to 1, got 2'));
  });
});

describe('the outbound queue against the SMTP lab', () => {
  it('greylisted: the page says the mail is delayed, the first retry waits out the window, and both mails arrive', async () => {
    const { app, inbox } = await lab({ firstDelayMs: 400, jitter: 0 });
    await inbox.smtp.greylist({ minDelay: 400 });
    const page = await postForm(`${app.url}/signup`, { email: inbox.address });
    expect(page.html).toMatch(
      /<p role="status">Sending “Confirm your email” is delayed: the mail server answered 451 4\.7\.1 Greylisted: first attempt from this client and sender, try again in 400 ms \(mailroom test rule: greylist on [^)]+\)\. We will try again\.<\/p>/,
    );
    expect(page.html).toContain('“Welcome to Acme” is waiting to be sent.');

    await inbox.expectMails(2, { from: 'acme' });
    const attempts = await inbox.smtp.attempts();
    expect(attempts.map((a) => [a.stage, a.code])).toEqual([
      ['rcpt', 451],
      ['data', 250],
      ['data', 250],
    ]);
    // Lower bound: the retry began no sooner than the window after the deferral.
    expect(attempts[1]!.beganAt!.getTime() - attempts[0]!.at.getTime()).toBeGreaterThanOrEqual(400);
    expect((await matchRetried(inbox, { atLeast: 1, atMost: 1, within: 0 })).pass).toBe(true);
    expect((await matchBackedOff(inbox, { minGap: 400 })).pass).toBe(true);
    expect((await deliveriesOf(app, inbox.address)).map((d) => [d.state, d.attempts.length])).toEqual([
      ['delivered', 2],
      ['delivered', 1],
    ]);
  });

  it('a permanent 550: not retried, and the app shows it could not deliver', async () => {
    const { app, inbox } = await lab({ firstDelayMs: 100 });
    await inbox.smtp.reject({ code: 550, enhanced: '5.1.1', text: 'No such user', times: 5 });
    const page = await postForm(`${app.url}/signup`, { email: inbox.address });
    expect(page.html).toContain(
      `<p role="alert">We could not deliver “Confirm your email” to ${inbox.address}. The mail server refused it for good: 550 5.1.1 No such user (mailroom test rule: reject on ${inbox.address})</p>`,
    );
    // Final at once: nothing is waiting to be retried, so the log can never grow.
    const deliveries = await deliveriesOf(app, inbox.address);
    expect(deliveries.map((d) => [d.state, d.attempts.length, d.next_attempt_at])).toEqual([
      ['bounced', 1, null],
      ['bounced', 1, null],
    ]);
    expect((await inbox.smtp.attempts()).map((a) => a.outcome)).toEqual(['rejected', 'rejected']);
    expect((await matchBackedOff(inbox)).pass).toBe(true);
    // A bounced confirmation forgets the signup: signing up again sends the signup mails, not the duplicate warning.
    await inbox.smtp.clear();
    await postJson(`${app.url}/api/signup`, { email: inbox.address });
    expect((await inbox.messages()).map((m) => m.subject).sort()).toEqual(['Confirm your email', 'Welcome to Acme']);
  });

  it('deferred past its last attempt: given up, with a "could not deliver" record naming the tries and the last reply', async () => {
    const { app, inbox } = await lab({ attempts: 3, firstDelayMs: 50, maxDelayMs: 100 });
    await inbox.smtp.defer({ code: 451, enhanced: '4.3.0', times: 100 });
    await postJson(`${app.url}/api/signup`, { email: inbox.address });
    const [confirm, welcome] = await settled(app, inbox.address);
    for (const delivery of [confirm!, welcome!]) {
      expect(delivery.state).toBe('failed');
      expect(delivery.attempts).toHaveLength(3);
      expect(delivery.reason).toBe(
        `Given up after 3 attempts; the last reply was 451 4.3.0 Deferred, try again later (mailroom test rule: defer on ${inbox.address})`,
      );
    }
    expect(await inbox.smtp.attempts()).toHaveLength(6);
    expect((await getJson(`${app.url}/api/deliveries?email=${encodeURIComponent(inbox.address)}`)).email).toBe(inbox.address);
    const status = await fetch(`${app.url}/deliveries?email=${encodeURIComponent(inbox.address)}`).then((r) => r.text());
    expect(status).toContain('<td>Confirm your email</td><td>Could not deliver</td><td>3</td>');
    expect(status).not.toContain('data-refresh-seconds');
  });

  it('gives up when the retry window would close before the next attempt', async () => {
    const { app, inbox } = await lab({ attempts: 10, firstDelayMs: 200, factor: 2, maxDelayMs: 10_000, jitter: 0, giveUpAfterMs: 500 });
    await inbox.smtp.defer({ times: 100 });
    await postJson(`${app.url}/api/tips`, { email: inbox.address, count: 1 });
    const [tip] = await settled(app, inbox.address);
    // Waits of 200 then 400 ms: the second would end past 500 ms.
    expect(tip!.attempts).toHaveLength(2);
    expect(tip!.reason).toMatch(/^Given up after 2 attempts: its retry window of 500 ms would close before the next attempt; the last reply was 451 /);
  });

  it('a dropped connection is retried like a deferral', async () => {
    const { app, inbox } = await lab({ firstDelayMs: 100, jitter: 0 });
    await inbox.smtp.disconnect({ stage: 'data' });
    await postJson(`${app.url}/api/tips`, { email: inbox.address, count: 1 });
    await inbox.expectMail({ subject: 'Acme tip 1 of 1' });
    const attempts = await inbox.smtp.attempts();
    expect(attempts.map((a) => a.outcome)).toEqual(['dropped', 'accepted']);
    expect(attempts[0]!.messageId).toBe(attempts[1]!.messageId);
    expect((await matchRetried(inbox, { atLeast: 1, atMost: 1, within: 0 })).pass).toBe(true);
  });

  it('a throttled burst is paced: after a 421 the queue waits before sending anything more to the address', async () => {
    const { app, inbox } = await lab({ attempts: 6, firstDelayMs: 300, factor: 2, maxDelayMs: 1_200 });
    await inbox.smtp.throttle({ limit: 2, per: 1_000 });
    const answer = await postJson(`${app.url}/api/tips`, { email: inbox.address, count: 5 });
    expect((answer.json.deliveries as DeliveryJson[]).map((d) => d.state)).toEqual(['delivered', 'delivered', 'retrying', 'queued', 'queued']);
    const mails = await inbox.expectMails(5, { subject: 'Acme tip' });
    expect(mails.map((m) => m.subject)).toEqual([1, 2, 3, 4, 5].map((n) => `Acme tip ${n} of 5`));
    const attempts = await inbox.smtp.attempts();
    const throttled = attempts.filter((a) => a.code === 421);
    expect(throttled.length).toBeGreaterThan(0);
    // Never more than the limit in a window: the server refused what was over it and the queue waited.
    expect(attempts.filter((a) => a.outcome === 'accepted')).toHaveLength(5);
    const judged = await matchBackedOff(inbox, { minGap: 300 });
    expect(judged.pass, judged.message()).toBe(true);
  });

  it('close() does not wait for a retry that is not due', async () => {
    const { app, inbox } = await lab({ firstDelayMs: 60_000, maxDelayMs: 60_000 });
    await inbox.smtp.defer({ times: 10 });
    await postJson(`${app.url}/api/tips`, { email: inbox.address, count: 1 });
    const [tip] = await deliveriesOf(app, inbox.address);
    expect(tip!.state).toBe('retrying');
    // Resolves without the minute's wait (the test's own timeout is well under it), and says what became of the mail.
    await app.close();
    expect(await inbox.smtp.attempts()).toHaveLength(1);
  });
});
