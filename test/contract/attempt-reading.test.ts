// Reading an attempt log as the sender's mails: which attempt retried which
// mail, whether mails sent side by side are told apart, and what the
// timeline prints. Pure functions over attempts; no sockets.
import { describe, expect, it } from 'vitest';
import type { SmtpAttempt } from '../../src/client/smtp-lab.js';
import { attemptFromWire, readLog } from '../../src/contract/attempt-reading.js';
import { formatTimeline } from '../../src/contract/attempt-timeline.js';
import type { WireSmtpAttempt } from '../../src/contract/wire.js';
import { missteps } from '../../src/runner/smtp-matchers.js';

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);

function attempt(at: number, outcome: SmtpAttempt['outcome'], extra: Partial<SmtpAttempt> & { began?: number } = {}): SmtpAttempt {
  const code = outcome === 'accepted' ? 250 : outcome === 'deferred' ? 451 : outcome === 'rejected' ? 550 : null;
  const { began, ...rest } = extra;
  return {
    at: new Date(T0 + at),
    beganAt: new Date(T0 + (began ?? at - 5)),
    clientIp: '127.0.0.1',
    from: 'app@example.com',
    to: 'x@mailroom.test',
    stage: outcome === 'accepted' ? 'data' : 'rcpt',
    code,
    enhancedCode: code === null ? null : `${String(code)[0]}.0.0`,
    text: '',
    outcome,
    rule: null,
    messageId: outcome === 'accepted' ? `<${at}@app>` : null,
    subject: null,
    storedId: null,
    provider: null,
    userAgent: null,
    retryAfterMs: null,
    ...rest,
  };
}

const policy = { minGap: 1000, firstRetryAfter: 1000, tolerance: 0.25, firstRetrySource: 'the shortest wait' };

describe('readLog', () => {
  it('takes an attempt that began after a deferral for its retry, and counts how long the sender waited', () => {
    const read = readLog([attempt(0, 'deferred'), attempt(1_500, 'deferred', { began: 1_200 }), attempt(4_000, 'accepted', { began: 3_900 })]);
    expect(read.deliveries).toHaveLength(1);
    expect(read.retries).toBe(2);
    expect(read.entries.map((e) => [e.delivery, e.try, e.waitedMs])).toEqual([
      [1, 1, undefined],
      [1, 2, 1_200],
      [1, 3, 2_400],
    ]);
    expect(read.deliveries[0]).toMatchObject({ state: 'accepted', messageId: '<4000@app>' });
  });

  it('tells two mails sent side by side apart: neither began after the other was answered', () => {
    const read = readLog([
      attempt(10, 'deferred', { began: 0 }),
      attempt(12, 'deferred', { began: 1 }),
      attempt(1_100, 'accepted', { began: 1_050, messageId: '<a@app>' }),
      attempt(1_110, 'accepted', { began: 1_060, messageId: '<b@app>' }),
    ]);
    expect(read.deliveries.map((d) => d.attempts.length)).toEqual([2, 2]);
    expect(read.retries).toBe(2);
    expect(missteps(read, policy)).toEqual([]);
  });

  it('starts a new mail after an accepted one, and knows a mail by its Message-ID across refusals at DATA', () => {
    const read = readLog([
      attempt(0, 'accepted', { messageId: '<one@app>' }),
      attempt(100, 'rejected', { stage: 'data', messageId: '<two@app>' }),
      attempt(200, 'accepted', { messageId: '<three@app>' }),
      attempt(300, 'accepted', { messageId: '<two@app>' }),
    ]);
    expect(read.entries.map((e) => [e.delivery, e.try])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
      [2, 2],
    ]);
    expect(missteps(read, policy).map((m) => m.text)).toEqual(['mail 2 was retried after a 550 5.0.0, a permanent refusal (try 2)']);
  });

  it('knows the tries of a sender that makes a new Message-ID every time by the subject', () => {
    const read = readLog([
      attempt(0, 'deferred', { stage: 'data', messageId: '<1@app>', subject: 'Your code' }),
      attempt(10, 'accepted', { began: 5, messageId: '<2@app>', subject: 'Welcome' }),
      attempt(2_000, 'accepted', { began: 1_900, messageId: '<3@app>', subject: 'Your code' }),
      attempt(3_000, 'rejected', { stage: 'data', messageId: '<4@app>', subject: 'Invoice' }),
      attempt(5_000, 'rejected', { stage: 'data', began: 4_900, messageId: '<5@app>', subject: 'Invoice' }),
    ]);
    expect(read.entries.map((e) => [e.delivery, e.try])).toEqual([
      [1, 1],
      [2, 1],
      [1, 2],
      [3, 1],
      [3, 2],
    ]);
    expect(missteps(read, policy).map((m) => m.text)).toEqual(['mail 3 was retried after a 550 5.0.0, a permanent refusal (try 2)']);
  });

  it('does not take another sender’s attempt for a retry', () => {
    const read = readLog([attempt(0, 'deferred'), attempt(2_000, 'accepted', { from: 'other@example.com' })]);
    expect(read.deliveries).toHaveLength(2);
    expect(read.retries).toBe(0);
  });

  it('names each misstep: too soon, before the greylisting window, shrinking waits, hurrying after a 421', () => {
    const hurried = readLog([attempt(0, 'deferred'), attempt(300, 'deferred', { began: 200 }), attempt(1_500, 'accepted', { began: 1_400 })]);
    expect(missteps(hurried, { ...policy, firstRetryAfter: 2_000, firstRetrySource: 'the greylisting window' }).map((m) => m.text)).toEqual([
      "mail 1's first retry came 200 ms after a 451 4.0.0, before the greylisting window of 2 s",
    ]);
    const tooSoon = readLog([attempt(0, 'deferred'), attempt(2_000, 'deferred', { began: 1_500 }), attempt(2_600, 'accepted', { began: 2_500 })]);
    expect(missteps(tooSoon, policy).map((m) => m.text)).toEqual(['mail 1 was retried 500 ms after a 451 4.0.0, less than 1 s apart (try 3)']);
    const shrinking = readLog([attempt(0, 'deferred'), attempt(4_000, 'deferred', { began: 4_000 }), attempt(5_500, 'accepted', { began: 5_500 })]);
    expect(missteps(shrinking, policy).map((m) => m.text)).toEqual([
      'mail 1 waited 1.5 s before try 3, shorter than the 4 s before try 2: the waits should grow',
    ]);
    const tolerated = readLog([attempt(0, 'deferred'), attempt(4_000, 'deferred', { began: 4_000 }), attempt(7_100, 'accepted', { began: 7_100 })]);
    expect(missteps(tolerated, policy)).toEqual([]);
    // A 421 at RCPT carries no Message-ID: the next attempt is read as that mail's retry, and named as too soon.
    const throttledAtRcpt = readLog([
      attempt(0, 'accepted', { messageId: '<1@app>' }),
      attempt(10, 'deferred', { code: 421, enhancedCode: '4.7.0' }),
      attempt(60, 'accepted', { began: 40, messageId: '<3@app>' }),
    ]);
    expect(missteps(throttledAtRcpt, policy).map((m) => m.text)).toEqual([
      "mail 2's first retry came 30 ms after a 421 4.7.0, before the shortest wait of 1 s",
    ]);
    // Where the mails are known apart, hurrying another mail after a 421 is named as such.
    const throttledAtData = readLog([
      attempt(10, 'deferred', { code: 421, enhancedCode: '4.7.0', stage: 'data', messageId: '<2@app>' }),
      attempt(60, 'accepted', { began: 40, messageId: '<3@app>' }),
    ]);
    expect(missteps(throttledAtData, policy).map((m) => m.text)).toEqual([
      'mail 2 was sent 30 ms after a 421 to mail 1: a throttled sender slows down for everything it sends',
    ]);
  });

  it("judges a provider API sender's retries by the Retry-After it was given, and its pace after a 429", () => {
    const api = (at: number, code: number, outcome: SmtpAttempt['outcome'], extra: Partial<SmtpAttempt> & { began?: number } = {}) =>
      attempt(at, outcome, { stage: 'api', code, enhancedCode: null, provider: 'resend', subject: 'Confirm', messageId: null, ...extra });
    const limited = { retryAfterMs: 2_000, rule: 'rate_limit' as const };
    // Retried at once: the 429 said two seconds.
    const hasty = readLog([api(0, 429, 'deferred', limited), api(150, 200, 'accepted', { began: 100 })]);
    expect(missteps(hasty, policy).map((m) => m.text)).toEqual(['mail 1 was retried 100 ms after a 429 that said to come back in 2 s (Retry-After; try 2)']);
    // Waited the Retry-After out: no misstep.
    const patient = readLog([api(0, 429, 'deferred', limited), api(2_150, 200, 'accepted', { began: 2_100 })]);
    expect(missteps(patient, policy)).toEqual([]);
    // A second mail sent inside the Retry-After of another's 429 hurries too.
    const hurried = readLog([
      api(0, 429, 'deferred', limited),
      api(1_550, 200, 'accepted', { began: 1_500, subject: 'Receipt' }),
      api(2_550, 200, 'accepted', { began: 2_500 }),
    ]);
    expect(missteps(hurried, policy).map((m) => m.text)).toEqual([
      'mail 2 was sent 1.5 s after a 429 to mail 1: a throttled sender slows down for everything it sends',
    ]);
  });

  it('prints the timeline: offsets from the first, mail and try, stage, reply, outcome, rule and wait', () => {
    const attempts = [
      attempt(0, 'deferred', { rule: 'greylist', enhancedCode: '4.7.1' }),
      attempt(1_204, 'accepted', { began: 1_104, enhancedCode: '2.6.0', subject: 'Confirm' }),
      attempt(1_210, 'dropped', { began: 1_205, stage: 'data' }),
    ];
    expect(formatTimeline('x@mailroom.test', attempts)).toBe(
      [
        'SMTP attempts at x@mailroom.test: 2 mails, 3 attempts, times from the first (12:00:00.000 UTC):',
        '   +0.000 s  mail 1, try 1  RCPT  451 4.7.1  deferred  (greylist)',
        '   +1.204 s  mail 1, try 2  DATA  250 2.6.0  accepted  waited 1.1 s  "Confirm"',
        '   +1.210 s  mail 2, try 1  DATA  no reply   dropped',
      ].join('\n'),
    );
    expect(formatTimeline('x@mailroom.test', [])).toBe('SMTP attempts at x@mailroom.test: none.');
  });

  it("for a reader without the log (an agent), names every line's client IP and MAIL FROM, and the first time as given", () => {
    const attempts = [
      attempt(0, 'deferred', { rule: 'greylist', enhancedCode: '4.7.1', clientIp: '10.0.0.7', from: '' }),
      attempt(2_000, 'accepted', { began: 1_990, enhancedCode: '2.6.0', clientIp: '10.0.0.7', from: '' }),
    ];
    expect(formatTimeline('x@mailroom.test', attempts, readLog(attempts), { senders: 'always', time: (d) => d.toISOString() })).toBe(
      [
        'SMTP attempts at x@mailroom.test: 1 mail, 2 attempts, times from the first (2030-01-01T12:00:00.000Z):',
        '   +0.000 s  mail 1, try 1  RCPT  451 4.7.1  deferred  (greylist)  client 10.0.0.7, MAIL FROM <>',
        '   +2.000 s  mail 1, try 2  DATA  250 2.6.0  accepted  waited 2 s  client 10.0.0.7, MAIL FROM <>',
      ].join('\n'),
    );
  });
});

describe('attemptFromWire', () => {
  it('reads an entry of the wire log into the shape the reading and the timeline take', () => {
    const wire: WireSmtpAttempt = {
      at: '2030-01-01T12:00:01.500Z',
      began_at: null,
      client_ip: '::1',
      from: 'app@example.com',
      to: 'x@mailroom.test',
      stage: 'data',
      code: 550,
      enhanced_code: '5.1.1',
      text: 'No such user',
      outcome: 'rejected',
      rule: 'reject',
      message_id: '<1@app>',
      subject: 'Hi',
      stored_id: null,
      provider: null,
      user_agent: null,
      retry_after_ms: null,
    };
    expect(attemptFromWire(wire)).toEqual({
      at: new Date(T0 + 1_500),
      beganAt: null,
      clientIp: '::1',
      from: 'app@example.com',
      to: 'x@mailroom.test',
      stage: 'data',
      code: 550,
      enhancedCode: '5.1.1',
      text: 'No such user',
      outcome: 'rejected',
      rule: 'reject',
      messageId: '<1@app>',
      subject: 'Hi',
      storedId: null,
      provider: null,
      userAgent: null,
      retryAfterMs: null,
    });
  });
});
