// The deferral lab over a provider API, judged as it judges SMTP: an app
// whose Resend call is rate limited retries it, and `toHaveBackedOff` passes
// an app that waits out the answer's Retry-After and fails one that retries
// at once (its words name the Retry-After it ignored). The app's schedule
// runs on a virtual clock the server shares, so a 2 s Retry-After costs no
// real time. And an SDK that retries by itself (AWS's, 3 attempts) shows its
// own retries in the attempt log, as the app's test would see them.
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { Resend } from 'resend';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/index.js';
import { matchBackedOff } from '../../src/runner/smtp-matchers.js';
import { startServer, type MailroomServer } from '../../src/server/index.js';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';

const servers: MailroomServer[] = [];
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))));
const quiet = () => {};

async function lab(clock?: FakeClock) {
  const server = await startServer({
    smtpPort: 0,
    httpPort: 0,
    messagePerSecond: Infinity,
    logger: { info: quiet, warn: quiet, error: quiet },
    ...(clock ? { clock } : {}),
  });
  servers.push(server);
  const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0], prefix: 'api-retry', timeout: 10_000, ...(clock ? { clock } : {}) });
  return { server, inbox };
}

describe("an app's retries of a provider API call, judged by toHaveBackedOff", () => {
  /** The app: sends its mail through Resend, and after a refusal waits `waitMs` (on the virtual clock) and sends again. */
  async function appRetrying(waitMs: (retryAfterMs: number) => number) {
    const clock = new FakeClock(Date.UTC(2030, 0, 1, 9, 0, 0));
    const { server, inbox } = await lab(clock);
    await inbox.smtp.rateLimit({ retryAfter: 2_000 });
    const resend = new Resend('re_app_key', { baseUrl: server.apiURL });
    const send = () => resend.emails.send({ from: 'app@acme.test', to: inbox.address, subject: 'Confirm your email', text: 'x' });
    const first = await send();
    expect(first.error).toMatchObject({ name: 'rate_limit_exceeded' });
    const retryAfterMs = Number(first.headers?.['retry-after']) * 1000;
    expect(retryAfterMs).toBe(2_000);
    await clock.advance(waitMs(retryAfterMs));
    expect((await send()).error).toBeNull();
    return { clock, inbox };
  }

  it('passes an app that waits out the Retry-After', async () => {
    const { clock, inbox } = await appRetrying((retryAfterMs) => retryAfterMs);
    const result = await driveClock(clock, matchBackedOff(inbox));
    expect(result.message()).toContain('kept to the policy');
    expect(result.pass).toBe(true);
  });

  it('fails an app that retries at once, naming the Retry-After it ignored and showing the calls', async () => {
    const { clock, inbox } = await appRetrying(() => 0);
    const result = await driveClock(clock, matchBackedOff(inbox));
    expect(result.pass).toBe(false);
    const message = result.message();
    expect(message).toContain(`Expected the sender to back off at ${inbox.address}, but:`);
    expect(message).toMatch(/mail 1 was retried \d+ ms after a 429 that said to come back in 2 s \(Retry-After; try 2\)/);
    expect(message).toContain(`Provider API calls at ${inbox.address}: 1 mail, 2 attempts`);
    expect(message).toMatch(/API +429 +deferred +resend API +\(rate_limit\) +retry after 2 s/);
  });
});

describe('an SDK that retries by itself', () => {
  it("AWS SES v2's own three attempts are in the attempt log: two 429s, then the mail", async () => {
    const { server, inbox } = await lab();
    // Retry-After 0: the SDK waits its own short backoff, not a second, between attempts.
    await inbox.smtp.rateLimit({ retryAfter: 0, times: 2 });
    const ses = new SESv2Client({ endpoint: server.apiURL, region: 'us-east-1', credentials: { accessKeyId: 'AKIDAPP', secretAccessKey: 'x' } });
    const sent = await ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'app@acme.test',
        Destination: { ToAddresses: [inbox.address] },
        Content: { Simple: { Subject: { Data: 'Receipt' }, Body: { Text: { Data: 'x' } } } },
      }),
    );
    ses.destroy();
    expect(sent.$metadata.attempts).toBe(3);
    const attempts = await inbox.smtp.attempts();
    expect(attempts.map((a) => [a.code, a.outcome, a.rule])).toEqual([
      [429, 'deferred', 'rate_limit'],
      [429, 'deferred', 'rate_limit'],
      [200, 'accepted', null],
    ]);
    expect(attempts.every((a) => a.userAgent?.startsWith('aws-sdk-js/'))).toBe(true);
    expect((await inbox.expectMail({ subject: 'Receipt' })).provider).toMatchObject({ name: 'ses', id: sent.MessageId });
  });
});
