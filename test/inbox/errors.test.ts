import { describe, expect, it } from 'vitest';
import { describeWait } from '../../src/inbox/describe.js';
import { MailroomApiError, MailroomError, MailroomNetworkError, isTransient } from '../../src/client/errors.js';
import { MailTimeoutError, UnexpectedMailError, type WaitFailure } from '../../src/inbox/wait-errors.js';
import { type MailSummary } from '../../src/client/messages.js';
import { formatDuration } from '../../src/contract/format.js';

const seen = (subject: string, from: string, time: string): MailSummary => ({
  id: subject,
  from,
  to: [],
  subject,
  preview: '',
  receivedAt: new Date(`2030-01-01T${time}Z`),
  size: 1,
});
const url = 'http://127.0.0.1:8025/api/v1/mailbox?address=a%40mailroom.test';
const failure = (over: Partial<WaitFailure> = {}): WaitFailure => ({
  address: 'signup-x7@mailroom.test',
  filter: 'subject ~ "Invoice"',
  budgetMs: 30_000,
  elapsedMs: 30_004,
  checks: 14,
  failedChecks: 0,
  refusals: 0,
  rejected: [],
  unfetched: [],
  wanted: 1,
  received: 0,
  lastError: undefined,
  cutShort: false,
  cutShortReason: undefined,
  ...over,
});

describe('MailTimeoutError', () => {
  it('reads like the issue: address, filter, budget, checks, and what was rejected', () => {
    const error = new MailTimeoutError(
      failure({ rejected: [seen('Welcome to Acme', 'hello@acme.example', '12:00:01'), seen('Confirm your email', 'hello@acme.example', '12:00:02')] }),
    );
    expect(error.message).toBe(
      'No mail matching subject ~ "Invoice" arrived at signup-x7@mailroom.test within 30 s (14 checks). ' +
        'Seen and rejected: "Welcome to Acme" from hello@acme.example at 12:00:01 UTC, "Confirm your email" from hello@acme.example at 12:00:02 UTC.',
    );
    expect(error).toBeInstanceOf(MailroomError);
    expect(error).toMatchObject({ name: 'MailTimeoutError', slug: 'mail_timeout', address: 'signup-x7@mailroom.test', budgetMs: 30_000, checks: 14 });
    expect(Object.isFrozen(error.rejected)).toBe(true);
  });

  it('says when nothing arrived at all, and drops "matching" for an empty filter', () => {
    expect(new MailTimeoutError(failure()).message).toBe(
      'No mail matching subject ~ "Invoice" arrived at signup-x7@mailroom.test within 30 s (14 checks). Nothing arrived at all.',
    );
    expect(new MailTimeoutError(failure({ filter: 'any mail', checks: 1 })).message).toBe(
      'No mail arrived at signup-x7@mailroom.test within 30 s (1 check). Nothing arrived at all.',
    );
  });

  it('counts what did arrive for expectMails, failures and refusals, and the last failure', () => {
    const lastError = new MailroomNetworkError({ method: 'GET', url, slug: 'network_error', detail: 'connect ECONNREFUSED 127.0.0.1:8025' });
    const text = new MailTimeoutError(failure({ wanted: 2, received: 1, failedChecks: 3, refusals: 1, lastError })).message;
    expect(text).toBe(
      `Only 1 of 2 mails matching subject ~ "Invoice" arrived at signup-x7@mailroom.test within 30 s (14 checks, 3 failed, 1 refused with 429). The last failed check: GET ${url} failed: connect ECONNREFUSED 127.0.0.1:8025`,
    );
    const none = new MailTimeoutError(failure({ checks: 0, failedChecks: 12, lastError })).message;
    expect(none).toContain('(0 checks, 12 failed). No check got an answer; the last failure: GET');
  });

  it('says a wait was cut short, after how long, of which budget, and why', () => {
    const text = new MailTimeoutError(failure({ cutShort: true, elapsedMs: 12_340, cutShortReason: 'the test is out of time' })).message;
    expect(text).toMatch(
      /^No mail matching subject ~ "Invoice" arrived at signup-x7@mailroom.test within 12.3 s, when the wait was cut short of its 30 s budget \(the test is out of time\) \(14 checks\)/,
    );
  });

  it('says so when the cut caught the first look in flight, instead of claiming nothing arrived', () => {
    const text = new MailTimeoutError(failure({ checks: 0, cutShort: true, elapsedMs: 2_900, cutShortReason: "the test's own timeout was 3.2 s away" }))
      .message;
    expect(text).toMatch(/\(0 checks\)\. No check got an answer before the cut \(the first was still in flight\), so whether mail arrived is unknown\.$/);
    expect(text).not.toContain('Nothing arrived at all');
  });

  it('names matching mail that arrived but could not be fetched', () => {
    const text = new MailTimeoutError(failure({ unfetched: [seen('Your invoice', 'billing@acme.example', '12:00:05')] })).message;
    expect(text).toContain('Matching mail did arrive but could not be fetched in time: "Your invoice" from billing@acme.example at 12:00:05 UTC.');
    expect(text).not.toContain('Nothing arrived at all');
  });

  it('names mail it passed over and why, instead of saying nothing arrived', () => {
    const skipped = [
      { summary: seen('Your code', 'hello@acme.example', '12:00:01'), reason: 'returned' as const },
      { summary: seen('Job 1', 'jobs@acme.example', '12:00:02'), reason: 'handled' as const },
      { summary: seen('Old offer', 'hello@acme.example', '12:00:03'), reason: 'gone' as const },
      { summary: seen('Your code', 'hello@acme.example', '12:00:04'), reason: 'claimed' as const },
    ];
    const error = new MailTimeoutError(failure({ filter: 'subject ~ "code"', skipped }));
    expect(error.message).toBe(
      'No mail matching subject ~ "code" arrived at signup-x7@mailroom.test within 30 s (14 checks). ' +
        'Already returned by an earlier wait: "Your code" from hello@acme.example at 12:00:01 UTC. ' +
        'Taken by a concurrent wait on this inbox: "Your code" from hello@acme.example at 12:00:04 UTC. ' +
        'Already handled (the handled store has it): "Job 1" from jobs@acme.example at 12:00:02 UTC. ' +
        'Deleted or expired before it could be fetched: "Old offer" from hello@acme.example at 12:00:03 UTC.',
    );
    expect(error.skipped.map((s) => s.reason)).toEqual(['returned', 'handled', 'gone', 'claimed']);
    expect(Object.isFrozen(error.skipped)).toBe(true);
    expect(new MailTimeoutError(failure()).skipped).toEqual([]);
  });
});

describe('UnexpectedMailError', () => {
  it('names the mail that arrived during the quiet period', () => {
    const error = new UnexpectedMailError({
      address: 'a@mailroom.test',
      filter: 'subject ~ "Error"',
      withinMs: 2000,
      elapsedMs: 1010,
      arrived: [seen('Error: payment failed', 'billing@acme.example', '12:00:03')],
    });
    expect(error.message).toBe(
      'Expected no mail matching subject ~ "Error" at a@mailroom.test for 2 s, but "Error: payment failed" from billing@acme.example at 12:00:03 UTC arrived (seen after 1 s).',
    );
    expect(error).toMatchObject({ slug: 'unexpected_mail', address: 'a@mailroom.test' });
  });
});

describe('MailroomApiError', () => {
  it('carries method, URL, status, slug, the server text and a hint', () => {
    const error = new MailroomApiError({
      method: 'GET',
      url,
      status: 404,
      slug: 'unknown_domain',
      serverMessage: 'not served here',
      address: 'a@nowhere.example',
    });
    expect(error.message).toBe(
      `GET ${url} was refused: 404 unknown_domain ("not served here"). This service does not serve that domain, so no mail can ever arrive there. Check MAILROOM_DOMAIN or the \`domain\` option.`,
    );
    expect(error).toMatchObject({ slug: 'unknown_domain', status: 404, address: 'a@nowhere.example' });
  });

  it('is transient for 429 and 5xx only; network errors always are', () => {
    const api = (status: number, slug: string) => new MailroomApiError({ method: 'GET', url, status, slug });
    expect([api(429, 'rate_limited'), api(500, 'internal_error'), api(503, 'unavailable')].map(isTransient)).toEqual([true, true, true]);
    expect([api(404, 'unknown_domain'), api(400, 'invalid_address'), api(401, 'unauthorized'), api(404, 'not_found')].map(isTransient)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(isTransient(new MailroomNetworkError({ method: 'GET', url, slug: 'request_timeout', detail: 'slow' }))).toBe(true);
    expect(isTransient(new Error('other'))).toBe(false);
  });
});

describe('describeWait', () => {
  it('titles a wait like a sentence', () => {
    expect(describeWait('a@mailroom.test', { subject: 'Confirm' })).toBe('Wait for mail to a@mailroom.test with subject ~ "Confirm"');
    expect(describeWait('a@mailroom.test')).toBe('Wait for mail to a@mailroom.test');
    expect(describeWait('a@mailroom.test', { from: 'acme' }, { count: 2 })).toBe('Wait for 2 mails to a@mailroom.test with from ~ "acme"');
    expect(describeWait('a@mailroom.test', { subject: 'Error' }, { kind: 'expectNoMail', within: 2000 })).toBe(
      'Expect no mail to a@mailroom.test with subject ~ "Error" for 2 s',
    );
  });
});

describe('formatDuration', () => {
  it('writes budgets as people do', () => {
    expect([250, 1000, 1500, 30_000, 90_000, 12_345].map(formatDuration)).toEqual(['250 ms', '1 s', '1.5 s', '30 s', '90 s', '12.3 s']);
  });
});
