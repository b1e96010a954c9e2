// Brevo beyond the contract suite's rows (providers.test.ts), through
// `@getbrevo/brevo`'s BrevoClient where it can send the call and a raw fetch
// where it cannot: message versions (each its own mail, with `params`
// rendered), the stamp's tags, the SDK's own retries of a rate limit as the
// attempt log shows them, the 429's headers, the sends that need what Brevo
// stores or schedules, a missing key, malformed JSON, bad base64 and too
// many recipients.
import { BrevoClient } from '@getbrevo/brevo';
import { describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import { brevoDriver } from '../support/providers/brevo.js';
import { sharedServer } from './helpers.js';

const server = sharedServer();

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'brevo' })));
}

async function client(): Promise<BrevoClient> {
  return new BrevoClient({ apiKey: 'xkeysib-test', baseUrl: `${(await server()).apiURL}/v3`, maxRetries: 0 });
}

type SendRequest = Parameters<BrevoClient['transactionalEmails']['sendTransacEmail']>[0];

/** What the SDK throws for a refused send: its class name, the status and Brevo's `{code, message}`. */
async function refusal(request: SendRequest): Promise<{ name: string; statusCode: number; body: { code: string; message: string } }> {
  const error = await (await client()).transactionalEmails.sendTransacEmail(request).then(
    () => undefined,
    (e: unknown) => e as { name: string; statusCode: number; body: { code: string; message: string } },
  );
  expect(error, 'the send should have been refused').toBeDefined();
  return { name: error!.name, statusCode: error!.statusCode, body: error!.body };
}

async function post(
  body: string,
  headers: Record<string, string> = { 'api-key': 'xkeysib-test' },
): Promise<{ status: number; headers: Headers; body: unknown }> {
  const answer = await fetch(`${(await server()).apiURL}/v3/smtp/email`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: answer.status, headers: answer.headers, body: await answer.json() };
}

const sender = { email: 'app@acme.test', name: 'Acme' };

describe('Brevo smtp/email', () => {
  it('sends each message version as its own mail, its params rendered, answering their ids in order', async () => {
    const [ann, bob] = await inboxes(2);
    const answer = await (
      await client()
    ).transactionalEmails.sendTransacEmail({
      sender,
      subject: 'Hello {{params.name}}',
      htmlContent: '<p>Your code is {{params.code}}</p>',
      params: { code: '000000' },
      tags: ['onboarding'],
      replyTo: { email: 'help@acme.test', name: 'Help' },
      messageVersions: [
        { to: [{ email: ann!.address }], params: { name: 'Ann', code: '111111' } },
        { to: [{ email: bob!.address }], params: { name: 'Bob' }, subject: 'Hi {{params.name}}' },
      ],
    });
    expect(answer.messageId).toBeUndefined();
    expect(answer.messageIds).toHaveLength(2);
    const forAnn = await ann!.expectMail({ subject: 'Hello Ann' });
    expect(forAnn.codes).toEqual(['111111']);
    expect(forAnn.provider).toEqual({ name: 'brevo', id: answer.messageIds![0], tags: ['onboarding'], metadata: {} });
    expect(forAnn.header('reply-to')).toBe('Help <help@acme.test>');
    const forBob = await bob!.expectMail({ subject: 'Hi Bob' });
    expect(forBob.codes).toEqual(['000000']);
    expect(forBob.provider?.id).toBe(answer.messageIds![1]);
    expect(answer.messageIds![0]).toMatch(/^<\d{12}\.\d{11}@smtp-relay\.mailin\.fr>$/);
  });

  it("retries a rate limit twice by itself (maxRetries 2): every call in the attempt log, as an app's test sees it", async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.rateLimit({ retryAfter: 1_000, times: 2 });
    const sent = await brevoDriver.send(
      (await server()).apiURL,
      { from: 'app@acme.test', to: [inbox!.address], subject: 'retried', text: 'x' },
      { sdkRetries: true },
    );
    expect(sent).toMatchObject({ ok: true });
    const attempts = await inbox!.smtp.attempts();
    expect(attempts.map((a) => [a.code, a.outcome, a.retryAfterMs])).toEqual([
      [429, 'deferred', 1_000],
      [429, 'deferred', 1_000],
      [201, 'accepted', null],
    ]);
    expect(new Set(attempts.map((a) => a.userAgent)).size).toBe(1);
  });

  it('answers a rate limit with its x-sib-ratelimit headers and a Retry-After the SDK reads', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.rateLimit({ retryAfter: 3_000 });
    const answer = await post(JSON.stringify({ sender, to: [{ email: inbox!.address }], subject: 'limited', textContent: 'x' }));
    expect(answer.status).toBe(429);
    expect(answer.body).toMatchObject({ code: 'too_many_requests' });
    expect(Object.fromEntries([...answer.headers].filter(([name]) => /^(retry-after|x-sib-ratelimit-)/.test(name)))).toEqual({
      'retry-after': '3',
      'x-sib-ratelimit-limit': '10',
      'x-sib-ratelimit-remaining': '0',
      'x-sib-ratelimit-reset': '3',
    });
  });

  it.each([
    ['a stored template', { templateId: 7 }, 'Templates stored at Brevo (templateId)'],
    ['a scheduled send', { scheduledAt: '2033-10-13T18:02:00.000Z' }, 'Scheduled sending (scheduledAt)'],
    ['an attachment by URL', { attachment: [{ url: 'https://acme.test/terms.pdf', name: 'terms.pdf' }] }, 'attachment[0].url'],
  ] satisfies [string, SendRequest, string][])('refuses %s as unsupported, saying what to send instead', async (_, extra, says) => {
    const [inbox] = await inboxes(1);
    const error = await refusal({ sender, to: [{ email: inbox!.address }], subject: 'x', textContent: 'x', ...extra });
    expect(error).toMatchObject({ name: 'BadRequestError', statusCode: 400, body: { code: 'invalid_parameter' } });
    expect(error.body.message).toContain(says);
    expect(error.body.message).toContain('not');
    expect(await inbox!.messages()).toEqual([]);
  });

  it('refuses an attachment whose content is not base64', async () => {
    const [inbox] = await inboxes(1);
    const error = await refusal({
      sender,
      to: [{ email: inbox!.address }],
      subject: 'x',
      textContent: 'x',
      attachment: [{ name: 'a.txt', content: 'not base64!' }],
    });
    expect(error).toMatchObject({ statusCode: 400, body: { code: 'invalid_parameter', message: '`attachment[0].content` is not valid base64' } });
  });

  it('refuses more than 99 recipients in a message', async () => {
    const to = Array.from({ length: 100 }, (_, i) => ({ email: `r${i}@acme.test` }));
    const error = await refusal({ sender, to, subject: 'x', textContent: 'x' });
    expect(error).toMatchObject({ statusCode: 400, body: { code: 'invalid_parameter', message: expect.stringContaining('at most 99') as string } });
  });

  it('refuses a call without the api-key header with its 401, and a body that is not JSON with a 400', async () => {
    const unkeyed = await post('{}', {});
    expect(unkeyed).toMatchObject({ status: 401, body: { code: 'unauthorized', message: expect.stringMatching(/^Key not found/) as string } });
    const malformed = await post('{"sender": ');
    expect(malformed).toMatchObject({ status: 400, body: { code: 'invalid_parameter', message: expect.stringContaining('not valid JSON') as string } });
  });
});
