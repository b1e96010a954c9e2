// inbox.smtp and the SMTP matchers against the embedded server: rules set
// through the inbox, mail sent over real SMTP (nodemailer) at chosen moments
// of a virtual clock that the server and the inbox share, and the matchers'
// verdicts and words. The watch's sleeps cost no real time (driveClock).
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, MailroomError, type Inbox } from '../../src/index.js';
import { matchBackedOff, matchRetried } from '../../src/runner/smtp-matchers.js';
import { startServer, type MailroomServer } from '../../src/server/index.js';
import { driveClock } from '../support/drive-clock.js';
import { FakeClock } from '../support/fake-clock.js';

const servers: MailroomServer[] = [];
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))));

const quiet = () => {};

async function lab(options: { smtpRules?: boolean } = {}) {
  const clock = new FakeClock(Date.UTC(2030, 0, 1, 9, 0, 0));
  const server = await startServer({
    smtpPort: 0,
    httpPort: 0,
    clock,
    messagePerSecond: Infinity,
    logger: { info: quiet, warn: quiet, error: quiet },
    ...options,
  });
  servers.push(server);
  const inbox = await createInbox({ apiURL: server.apiURL, domain: server.domains[0], clock, prefix: 'lab', timeout: 10_000 });
  let sending = 0;
  /** Sends one mail now (on the virtual clock); resolves with the server's answer, refused or not. */
  const send = async (options: { from?: string; messageId?: string } = {}): Promise<string> => {
    sending++;
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, secure: false, ignoreTLS: true });
    try {
      const info = await transport.sendMail({
        from: options.from ?? 'app@example.com',
        to: inbox.address,
        subject: 'hi',
        text: 'x',
        messageId: options.messageId,
      });
      return info.response;
    } catch (error) {
      return String((error as { response?: string }).response ?? error);
    } finally {
      transport.close();
      sending--;
    }
  };
  const drive = <T>(promise: Promise<T>) => driveClock(clock, promise, () => sending > 0);
  return { clock, server, inbox, send, drive };
}

/** Sends at each offset (ms after the previous send), as a sender with that schedule would. */
async function sendAt(l: Awaited<ReturnType<typeof lab>>, gaps: readonly number[], options?: { messageId?: string }) {
  const answers = [await l.send(options)];
  for (const gap of gaps) {
    await l.clock.advance(gap);
    answers.push(await l.send(options));
  }
  return answers;
}

describe('inbox.smtp', () => {
  it('sets each rule with the server’s defaults and returns it typed; rules(), clear() and attempts() read back', async () => {
    const { inbox, send } = await lab();
    expect(await inbox.smtp.greylist({ minDelay: 2_000 })).toMatchObject({
      id: 'r1',
      kind: 'greylist',
      minDelay: 2_000,
      resetOnEarlyRetry: false,
      remaining: null,
    });
    expect(await inbox.smtp.throttle({ limit: 2 })).toMatchObject({ kind: 'throttle', limit: 2, per: 60_000 });
    expect(await inbox.smtp.defer({ code: 452 })).toMatchObject({ kind: 'defer', code: 452, enhanced: '4.2.2', stage: 'rcpt', times: 1, text: null });
    expect(await inbox.smtp.reject()).toMatchObject({ kind: 'reject', code: 550, enhanced: '5.1.1', stage: 'data', times: 1 });
    expect(await inbox.smtp.slow({ delayMs: 1, stage: 'data' })).toMatchObject({ kind: 'slow', delayMs: 1, stage: 'data', times: null });
    const dropped = await inbox.smtp.disconnect({ times: 2 });
    expect(dropped).toMatchObject({ kind: 'disconnect', stage: 'rcpt', times: 2, remaining: 2 });
    expect(dropped.setAt).toBeInstanceOf(Date);
    expect((await inbox.smtp.rules()).map((r) => r.kind)).toEqual(['greylist', 'throttle', 'defer', 'reject', 'slow', 'disconnect']);
    expect(await inbox.smtp.clear()).toBe(6);
    expect(await inbox.smtp.rules()).toEqual([]);

    expect(await send({ messageId: '<typed@app.example>' })).toMatch(/^250/);
    const [attempt] = await inbox.smtp.attempts();
    expect(attempt).toMatchObject({
      to: inbox.address,
      from: 'app@example.com',
      stage: 'data',
      code: 250,
      enhancedCode: '2.6.0',
      outcome: 'accepted',
      rule: null,
      messageId: '<typed@app.example>',
    });
    expect(attempt!.at).toBeInstanceOf(Date);
    expect(attempt!.beganAt).toBeInstanceOf(Date);
    expect((await inbox.messages()).map((m) => m.id)).toEqual([attempt!.storedId]);

    await inbox.smtp.defer();
    expect(await inbox.delete()).toBe(1);
    expect(await inbox.smtp.attempts()).toEqual([]);
    expect(await inbox.smtp.rules()).toEqual([]);
  });

  const bad: Array<[string, (inbox: Inbox) => Promise<unknown>, string]> = [
    [
      'an unknown key',
      (i) => i.smtp.greylist({ minDelay: 1, delay: 5 } as never),
      'Unknown inbox.smtp.greylist() option `delay`; expected one of minDelay, resetOnEarlyRetry',
    ],
    [
      'a duration as text',
      (i) => i.smtp.greylist({ minDelay: '2s' as never }),
      'Expected `minDelay` to be a whole number of milliseconds from 0 to 86400000, got "2s"',
    ],
    ['no limit', (i) => i.smtp.throttle({} as never), 'inbox.smtp.throttle() needs `limit` (messages per window)'],
    ['a window of 0', (i) => i.smtp.throttle({ limit: 1, per: 0 }), 'Expected `per` to be a whole number of milliseconds from 1 to 86400000, got 0'],
    ['a permanent code to defer', (i) => i.smtp.defer({ code: 550 }), 'Expected `code` to be 450, 451 or 452, got 550'],
    [
      'an enhanced code of the wrong class',
      (i) => i.smtp.reject({ enhanced: '4.7.1' }),
      'Expected `enhanced` to be an enhanced status code of the reply\'s class, like "5.1.1", got "4.7.1"',
    ],
    [
      'a text on two lines',
      (i) => i.smtp.reject({ text: 'no\r\nway' }),
      'Expected `text` to be one line of printable ASCII, 1 to 200 characters, got "no\\r\\nway"',
    ],
    ['no delay', (i) => i.smtp.slow({} as never), 'inbox.smtp.slow() needs `delayMs` (how long the reply is held, in ms)'],
    ['a stage before RCPT', (i) => i.smtp.disconnect({ stage: 'mail' as never }), 'Expected `stage` to be "rcpt" or "data", got "mail"'],
    ['zero times', (i) => i.smtp.disconnect({ times: 0 }), 'Expected `times` to be a whole number of attempts from 1 to 10000, got 0'],
    ['options that are not an object', (i) => i.smtp.defer(451 as never), 'Expected inbox.smtp.defer() options to be an object like { code: … }, got 451'],
  ];
  it.for(bad)('refuses %s before asking the server', async ([, act, message]) => {
    const { inbox, server } = await lab();
    await expect(act(inbox)).rejects.toThrow(new TypeError(message));
    expect(server.stats(inbox.address).deleteMailbox).toBe(0);
    expect(await inbox.smtp.rules()).toEqual([]);
  });

  it('says so when the service offers no SMTP rules', async () => {
    const { inbox } = await lab({ smtpRules: false });
    const error = await inbox.smtp.greylist().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MailroomError);
    expect((error as MailroomError).slug).toBe('unsupported');
    expect((error as Error).message).toMatch(/does not offer SMTP rules \(its GET \/healthz advertises no features\.smtp_rules\)/);
    await expect(matchRetried(inbox)).rejects.toMatchObject({ slug: 'unsupported' });
  });
});

describe('toHaveBeenRetried', () => {
  it('passes once a greylisted mail came back, and its .not message prints the timeline', async () => {
    const l = await lab();
    await l.inbox.smtp.greylist({ minDelay: 2_000 });
    expect(await sendAt(l, [2_000])).toEqual([expect.stringMatching(/^451 4\.7\.1/), expect.stringMatching(/^250/)]);
    // As `.not` runs it: the check passes, so the `.not` fails with this text.
    const result = await l.drive(matchRetried(l.inbox, {}, { isNot: true }));
    expect(result.pass).toBe(true);
    expect(result.message()).toBe(
      [
        `Expected mail to ${l.inbox.address} not to have been retried at least 1 time, but it was retried 1 time (watched 0 ms).`,
        '',
        `SMTP attempts at ${l.inbox.address}: 1 mail, 2 attempts, times from the first (${clockOf(result.attempts[0]!.at)}):`,
        '   +0.000 s  mail 1, try 1  RCPT  451 4.7.1  deferred  (greylist)',
        '   +2.000 s  mail 1, try 2  DATA  250 2.6.0  accepted  waited 2 s  "hi"',
        '',
        'Expected: not retried at least 1 time',
        'Received: retried 1 time (1 mail, 2 attempts).',
      ].join('\n'),
    );
  });

  it('watches up to `within` for a retry that never comes, then fails saying so', async () => {
    const l = await lab();
    await l.inbox.smtp.reject({ stage: 'rcpt' });
    await l.send();
    const started = l.clock.now();
    const result = await l.drive(matchRetried(l.inbox, { within: 3_000 }));
    expect(result.pass).toBe(false);
    expect(l.clock.now() - started).toBeGreaterThanOrEqual(3_000);
    expect(result.message()).toMatch(
      new RegExp(`^Expected mail to ${l.inbox.address} to have been retried at least 1 time, but it was retried 0 times \\(watched 3 s\\)\\.\\n`),
    );
    expect(result.message()).toContain('+0.000 s  mail 1, try 1  RCPT  550 5.1.1  rejected  (reject)');
  });

  it('with `atMost`, watches the whole period when all is well, and stops at once when there are more', async () => {
    const l = await lab();
    await l.send();
    const quietStart = l.clock.now();
    expect((await l.drive(matchRetried(l.inbox, { atMost: 0, within: 2_000 }))).pass).toBe(true);
    expect(l.clock.now() - quietStart).toBeGreaterThanOrEqual(2_000);

    await l.inbox.smtp.defer();
    await sendAt(l, [1_000, 1_000]);
    const busyStart = l.clock.now();
    const over = await l.drive(matchRetried(l.inbox, { atMost: 0, within: 60_000 }));
    expect(over.pass).toBe(false);
    expect(l.clock.now()).toBe(busyStart);
    expect(over.actual).toBe('retried 1 time (3 mails, 4 attempts)');
  });

  it('counts only the sender named in `from`', async () => {
    const l = await lab();
    await l.inbox.smtp.defer();
    await l.send({ from: 'noisy@example.com' });
    await l.clock.advance(1_000);
    await l.send({ from: 'noisy@example.com' });
    await l.send({ from: 'quiet@example.com' });
    expect((await l.drive(matchRetried(l.inbox, { from: 'noisy' }))).pass).toBe(true);
    const quietOne = await l.drive(matchRetried(l.inbox, { from: /^quiet@/, atMost: 0, within: 0 }));
    expect([quietOne.pass, quietOne.attempts.length]).toEqual([true, 1]);
  });

  it('refuses what it cannot judge: not an inbox, unknown options, a range upside down', async () => {
    const { inbox } = await lab();
    await expect(matchRetried(42)).rejects.toThrow(
      new TypeError('toHaveBeenRetried expects an Inbox (the `inbox` fixture or the result of createInbox()), got 42'),
    );
    await expect(matchRetried(inbox, { times: 2 } as never)).rejects.toThrow(
      'Unknown toHaveBeenRetried option `times`; expected one of atLeast, atMost, within, from, signal',
    );
    await expect(matchRetried(inbox, { atLeast: 3, atMost: 1 })).rejects.toThrow('Expected `atLeast` (3) to be at most `atMost` (1)');
    await expect(matchRetried(inbox, { within: -1 })).rejects.toThrow('Expected `within` to be a non-negative number of milliseconds, got -1');
    await expect(matchBackedOff(inbox, { tolerance: 2 })).rejects.toThrow('Expected `tolerance` to be a fraction from 0 to below 1, like 0.25, got 2');
  });
});

describe('toHaveBackedOff', () => {
  it('passes a sender that waited 1, 2 then 4 s', async () => {
    const l = await lab();
    await l.inbox.smtp.defer({ times: 3 });
    expect((await sendAt(l, [1_000, 2_000, 4_000])).at(-1)).toMatch(/^250/);
    const result = await l.drive(matchBackedOff(l.inbox));
    expect(result.pass).toBe(true);
    expect(result.actual).toBe('3 retries without a misstep');
  });

  it('names a sender that hammers, with the timeline', async () => {
    const l = await lab();
    await l.inbox.smtp.defer({ times: 2 });
    await sendAt(l, [100, 100]);
    const result = await l.drive(matchBackedOff(l.inbox));
    expect(result.pass).toBe(false);
    const message = result.message();
    expect(message).toContain(
      `Expected the sender to back off at ${l.inbox.address}, but:\n  - mail 1's first retry came 100 ms after a 451 4.3.0, before the shortest wait of 1 s\n  - mail 1 was retried 100 ms after a 451 4.3.0, less than 1 s apart (try 3)`,
    );
    expect(message).toContain('   +0.200 s  mail 1, try 3  DATA  250 2.6.0  accepted  waited 100 ms');
    expect(message).toMatch(/\nExpected: backed off: retries at least 1 s apart, the first after 1 s, waits that grow, none after a 5xx\nReceived: /);
  });

  it('holds the first retry to the greylisting window by default', async () => {
    const l = await lab();
    await l.inbox.smtp.greylist({ minDelay: 3_000 });
    await sendAt(l, [1_500, 1_500]);
    const result = await l.drive(matchBackedOff(l.inbox));
    expect(result.pass).toBe(false);
    expect(result.actual).toBe("mail 1's first retry came 1.5 s after a 451 4.7.1, before the greylisting window of 3 s");
    expect((await l.drive(matchBackedOff(l.inbox, { firstRetryAfter: 1_000 }))).pass).toBe(true);
  });

  it('names a mail retried after a permanent refusal, known by its Message-ID', async () => {
    const l = await lab();
    await l.inbox.smtp.reject();
    await sendAt(l, [5_000], { messageId: '<same@app.example>' });
    const result = await l.drive(matchBackedOff(l.inbox));
    expect(result.actual).toBe('mail 1 was retried after a 550 5.1.1, a permanent refusal (try 2)');
    // .not: a test of a misbehaving sender.
    expect((await l.drive(matchBackedOff(l.inbox, {}, { isNot: true }))).pass).toBe(false);
  });

  it('with `within`, keeps watching and fails at the first misstep', async () => {
    const l = await lab();
    await l.inbox.smtp.defer({ times: 5 });
    await l.send();
    const judged = l.drive(matchBackedOff(l.inbox, { within: 10_000 }));
    await l.clock.advance(300);
    await l.send();
    const result = await judged;
    expect(result.pass).toBe(false);
    expect(result.actual).toMatch(/first retry came \d+ ms after a 451 4\.3\.0/);
  });
});

function clockOf(date: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(date.getUTCHours())}:${p(date.getUTCMinutes())}:${p(date.getUTCSeconds())}.${p(date.getUTCMilliseconds(), 3)} UTC`;
}
