// The provider APIs' contract, one suite run against every provider through
// its own SDK (test/support/provider-sdks.ts): what a user's app calls is
// what is tested. Each provider takes a mail to To, Cc and Bcc with text,
// HTML, an attachment and a custom header into three fresh inboxes; refuses
// what the provider refuses with the error its SDK raises; and answers the
// deferral lab's rules as the provider answers when things go wrong, every
// call in the attempt log. A new provider is one driver and one row here.
import { describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import type { MailroomServer } from '../../src/server/index.js';
import type { ProviderDriver, TestMail } from '../support/provider-sdks.js';
import { brevoDriver } from '../support/providers/brevo.js';
import { mailgunDriver } from '../support/providers/mailgun.js';
import { postmarkDriver } from '../support/providers/postmark.js';
import { resendDriver } from '../support/providers/resend.js';
import { sendgridDriver } from '../support/providers/sendgrid.js';
import { sesV1Driver } from '../support/providers/ses-v1.js';
import { sesV2Driver } from '../support/providers/ses-v2.js';
import { sharedServer } from './helpers.js';

/**
 * The SDK's own name for a refusal (an exception class, or the error's
 * `name`); for an SDK that raises one class for every refusal, with the
 * status and the field the answer names, which tell them apart.
 */
type Refusal = string | { readonly error: string; readonly status: number; readonly field?: string | null };

interface Refusals {
  readonly auth: Refusal;
  readonly noRecipient: Refusal;
  readonly badAddress: Refusal;
  readonly noContent: Refusal;
  readonly rateLimited: Refusal;
  readonly unavailable: Refusal;
  readonly rejected: Refusal;
}

/** What an outcome refused as `refusal` matches. */
const refusedAs = (refusal: Refusal) => ({ ok: false, ...(typeof refusal === 'string' ? { error: refusal } : refusal) });

interface ProviderCase {
  readonly driver: ProviderDriver;
  readonly refusals: Refusals;
  /** The status the provider answers a rate limit with, and whether it says when to come back. */
  readonly rateLimitStatus: number;
  /** The status the provider accepts a mail with, when not 200 (SendGrid's 202). */
  readonly acceptedStatus?: number;
}

const CASES: readonly ProviderCase[] = [
  {
    driver: resendDriver,
    refusals: {
      auth: 'missing_api_key',
      noRecipient: 'missing_required_field',
      badAddress: 'validation_error',
      noContent: 'missing_required_field',
      rateLimited: 'rate_limit_exceeded',
      unavailable: 'application_error',
      rejected: 'validation_error',
    },
    rateLimitStatus: 429,
  },
  {
    driver: sesV2Driver,
    refusals: {
      auth: 'MissingAuthenticationTokenException',
      noRecipient: 'BadRequestException',
      badAddress: 'BadRequestException',
      noContent: 'BadRequestException',
      rateLimited: 'TooManyRequestsException',
      unavailable: 'ServiceUnavailable',
      rejected: 'MessageRejected',
    },
    rateLimitStatus: 429,
  },
  {
    driver: sendgridDriver,
    refusals: {
      auth: { error: 'ResponseError', status: 401 },
      noRecipient: { error: 'ResponseError', status: 400, field: 'personalizations.0.to' },
      badAddress: { error: 'ResponseError', status: 400, field: 'personalizations.0.to.0.email' },
      noContent: { error: 'ResponseError', status: 400, field: 'content' },
      rateLimited: { error: 'ResponseError', status: 429 },
      unavailable: { error: 'ResponseError', status: 503 },
      rejected: { error: 'ResponseError', status: 400, field: null },
    },
    rateLimitStatus: 429,
    acceptedStatus: 202,
  },
  {
    driver: postmarkDriver,
    refusals: {
      auth: 'InvalidAPIKeyError',
      noRecipient: 'InvalidEmailRequestError',
      badAddress: 'InvalidEmailRequestError',
      noContent: 'InvalidEmailRequestError',
      rateLimited: 'RateLimitExceededError',
      unavailable: 'ServiceUnavailablerError',
      rejected: 'InactiveRecipientsError',
    },
    rateLimitStatus: 429,
  },
  {
    driver: sesV1Driver,
    refusals: {
      auth: 'MissingAuthenticationToken',
      noRecipient: 'InvalidParameterValue',
      badAddress: 'InvalidParameterValue',
      noContent: 'ValidationError',
      rateLimited: 'Throttling',
      unavailable: 'ServiceUnavailable',
      rejected: 'MessageRejected',
    },
    rateLimitStatus: 400,
  },
  {
    driver: mailgunDriver,
    refusals: {
      // A raw call (the SDK refuses an empty key itself): Mailgun's text answer.
      auth: { error: 'Forbidden', status: 401 },
      noRecipient: { error: 'MailgunAPIError', status: 400 },
      badAddress: { error: 'MailgunAPIError', status: 400 },
      noContent: { error: 'MailgunAPIError', status: 400 },
      rateLimited: { error: 'MailgunAPIError', status: 429 },
      unavailable: { error: 'MailgunAPIError', status: 503 },
      rejected: { error: 'MailgunAPIError', status: 400 },
    },
    rateLimitStatus: 429,
  },
  {
    driver: brevoDriver,
    refusals: {
      auth: { error: 'BrevoError', status: 401 },
      noRecipient: { error: 'BadRequestError', status: 400 },
      badAddress: { error: 'BadRequestError', status: 400 },
      noContent: { error: 'BadRequestError', status: 400 },
      rateLimited: { error: 'BrevoError', status: 429 },
      unavailable: { error: 'BrevoError', status: 503 },
      rejected: { error: 'BadRequestError', status: 400 },
    },
    rateLimitStatus: 429,
    acceptedStatus: 201,
  },
];

const server = sharedServer();
/** A server that takes messages of at most 32 KiB. */
const small = sharedServer({ maxMessageBytes: 32 * 1024 });

async function inboxes(count: number, label: string): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: label })));
}

const plain = (to: string, subject: string): TestMail => ({ from: 'Acme <app@acme.test>', to: [to], subject, text: 'Hello' });

describe.each(CASES)('$driver.sdk', ({ driver, refusals, rateLimitStatus, acceptedStatus = 200 }) => {
  let baseURL: string;
  const base = async (): Promise<string> => (baseURL ??= (await server()).apiURL satisfies MailroomServer['apiURL']);

  it('takes a mail to To, Cc and Bcc with text, HTML, an attachment and a custom header, into each inbox', async () => {
    const [to, cc, bcc] = await inboxes(3, driver.provider);
    const subject = `Welcome via ${driver.provider}`;
    const sent = await driver.send(await base(), {
      from: 'Acme <app@acme.test>',
      to: [to!.address],
      cc: [cc!.address],
      bcc: [bcc!.address],
      subject,
      text: 'Your code is 482913',
      html: '<p>Confirm at <a href="https://acme.test/confirm?t=1">this link</a></p>',
      attachment: { filename: 'terms.txt', content: Buffer.from('the terms'), contentType: 'text/plain' },
      header: ['X-Campaign', 'spring'],
    });
    expect(sent).toMatchObject({ ok: true });
    const id = (sent as { id: string }).id;
    for (const inbox of [to!, cc!, bcc!]) {
      const mail = await inbox.expectMail({ subject });
      expect(mail.provider).toMatchObject({ name: driver.provider, id });
      expect(mail.from).toContain('app@acme.test');
      expect(mail.to).toEqual([to!.address]);
      expect(mail.cc).toEqual([cc!.address]);
      expect(JSON.stringify(mail.headers)).not.toContain(bcc!.address);
      expect(mail.text).toContain('482913');
      expect(mail.links).toEqual(['https://acme.test/confirm?t=1']);
      expect(mail.header('x-campaign')).toBe('spring');
      expect(mail.attachments).toMatchObject([{ filename: 'terms.txt', contentType: 'text/plain', size: 9 }]);
    }
    const [attempt] = await to!.smtp.attempts();
    expect(attempt).toMatchObject({ stage: 'api', code: acceptedStatus, outcome: 'accepted', provider: driver.provider, from: 'app@acme.test', subject });
    expect(attempt!.userAgent).toBeTruthy();
  });

  describe('refuses as the provider does, with the error its SDK raises', () => {
    it.each([
      ['no API key', 'auth', (to: string) => [plain(to, 'no key'), { key: null }] as const],
      ['no recipient', 'noRecipient', () => [{ ...plain('', 'none'), to: [] }] as const],
      ['an ill-formed address', 'badAddress', () => [plain('not-an-address', 'bad')] as const],
      ['no content', 'noContent', (to: string) => [{ from: 'app@acme.test', to: [to], subject: 'empty' }] as const],
    ] as const)('%s', async (_, refusal, make) => {
      const [inbox] = await inboxes(1, 'refused');
      const [mail, as] = make(inbox!.address) as readonly [TestMail, { key: null }?];
      const outcome = await driver.send(await base(), mail, as);
      expect(outcome).toMatchObject(refusedAs(refusals[refusal as keyof Refusals]));
    });
  });

  it('refuses a message over maxMessageBytes with a 413, storing nothing', async () => {
    const { apiURL, domains } = await small();
    const inbox = await createInbox({ apiURL, domain: domains[0], prefix: 'big' });
    const attachment = { filename: 'big.txt', content: Buffer.alloc(40 * 1024, 'a'), contentType: 'text/plain' };
    const outcome = await driver.send(apiURL, { ...plain(inbox.address, 'big'), attachment });
    expect(outcome).toMatchObject({ ok: false, status: 413 });
    expect(await inbox.messages()).toEqual([]);
  });

  describe("answers the lab's rules as the provider answers when things go wrong", () => {
    it('rate limited: its 429, then the mail once the rule is spent; both calls in the attempt log', async () => {
      const [inbox] = await inboxes(1, 'limited');
      await inbox!.smtp.rateLimit({ retryAfter: 2_000 });
      const refused = await driver.send(await base(), plain(inbox!.address, 'limited'));
      expect(refused).toMatchObject(refusedAs(refusals.rateLimited));
      expect(await driver.send(await base(), plain(inbox!.address, 'limited'))).toMatchObject({ ok: true });
      const attempts = await inbox!.smtp.attempts();
      expect(attempts.map((a) => [a.code, a.outcome, a.rule, a.retryAfterMs])).toEqual([
        [rateLimitStatus, 'deferred', 'rate_limit', 2_000],
        [acceptedStatus, 'accepted', null, null],
      ]);
      await inbox!.expectMail({ subject: 'limited' });
    });

    it.each([
      ['unavailable', (inbox: Inbox) => inbox.smtp.unavailable({ status: 503 }), 'unavailable', 503, 'deferred'],
      ['rejected for good', (inbox: Inbox) => inbox.smtp.reject(), 'rejected', undefined, 'rejected'],
    ] as const)('%s', async (_, rule, refusal, status, outcome) => {
      const [inbox] = await inboxes(1, 'ruled');
      await rule(inbox!);
      const refused = await driver.send(await base(), plain(inbox!.address, 'ruled'));
      expect(refused).toMatchObject(refusedAs(refusals[refusal]));
      const [attempt] = await inbox!.smtp.attempts();
      expect(attempt).toMatchObject({ stage: 'api', outcome, provider: driver.provider });
      if (status !== undefined) expect(attempt!.code).toBe(status);
    });
  });
});
