// SES v1 (the query protocol on `POST /`) beyond the contract suite's rows
// (providers.test.ts), through `@aws-sdk/client-ses` where it can send the
// call and a raw fetch with a SigV4-shaped header where it cannot:
// SendRawEmail with `Destinations` (a Bcc recipient only in the envelope)
// and without (the source's own recipients), the SDK's own retries of an
// outage in the attempt log, a templated send, text the XML answer
// must escape, bad base64, too many recipients, a missing or unknown
// Action - and `GET /` still the web UI.
import { SESClient, SendEmailCommand, SendRawEmailCommand, SendTemplatedEmailCommand } from '@aws-sdk/client-ses';
import MailComposer from 'nodemailer/lib/mail-composer';
import { afterAll, describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import { sesV1Driver } from '../support/providers/ses-v1.js';
import { sharedServer } from './helpers.js';

const server = sharedServer();

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'sesv1' })));
}

let ses: SESClient | undefined;
async function client(): Promise<SESClient> {
  return (ses ??= new SESClient({
    endpoint: (await server()).apiURL,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
    maxAttempts: 1,
  }));
}
afterAll(() => ses?.destroy());

/** The SDK's exception for a refused call: its name, status and message. */
async function refusal(sending: Promise<unknown>): Promise<{ name: string; status: number | undefined; message: string }> {
  const error = (await sending.then(
    () => undefined,
    (e: unknown) => e,
  )) as { name: string; $metadata: { httpStatusCode?: number }; message: string } | undefined;
  expect(error, 'the call should have been refused').toBeDefined();
  return { name: error!.name, status: error!.$metadata.httpStatusCode, message: error!.message };
}

const SIGV4 = 'AWS4-HMAC-SHA256 Credential=AKIDTEST/20300101/us-east-1/ses/aws4_request, SignedHeaders=host;x-amz-date, Signature=0123abcd';

async function post(
  form: Record<string, string>,
  headers: Record<string, string> = { authorization: SIGV4 },
): Promise<{ status: number; type: string; body: string }> {
  const answer = await fetch(`${(await server()).apiURL}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: answer.status, type: answer.headers.get('content-type') ?? '', body: await answer.text() };
}

const compose = (to: string, subject: string) => new MailComposer({ from: 'app@acme.test', to, subject, text: 'raw body' }).compile().build();

describe('SES v1 SendRawEmail', () => {
  it('delivers to Destinations, a Bcc recipient too, whose address the headers never show; Tags become the metadata', async () => {
    const [to, bcc] = await inboxes(2);
    const ses = await client();
    const answer = await ses.send(
      new SendRawEmailCommand({
        Destinations: [to!.address, bcc!.address],
        RawMessage: { Data: await compose(to!.address, 'raw via ses v1') },
        Tags: [{ Name: 'flow', Value: 'signup' }],
      }),
    );
    for (const inbox of [to!, bcc!]) {
      const mail = await inbox.expectMail({ subject: 'raw via ses v1' });
      expect(mail.provider).toEqual({ name: 'ses', id: answer.MessageId, tags: [], metadata: { flow: 'signup' } });
      expect(mail.to).toEqual([to!.address]);
      expect(JSON.stringify(mail.headers)).not.toContain(bcc!.address);
    }
  });

  it('without Destinations delivers to the To, Cc and Bcc of the source itself', async () => {
    const [to, cc] = await inboxes(2);
    const source = await new MailComposer({ from: 'app@acme.test', to: to!.address, cc: cc!.address, subject: 'own headers', text: 'x' }).compile().build();
    await (await client()).send(new SendRawEmailCommand({ RawMessage: { Data: source } }));
    await Promise.all([to!.expectMail({ subject: 'own headers' }), cc!.expectMail({ subject: 'own headers' })]);
  });

  it('refuses RawMessage.Data that is not base64, storing nothing', async () => {
    const answer = await post({ Action: 'SendRawEmail', Version: '2010-12-01', 'RawMessage.Data': 'not base64!' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<Code>InvalidParameterValue</Code>');
    expect(answer.body).toContain('`RawMessage.Data` is not valid base64');
  });
});

describe('SES v1 SendEmail', () => {
  it('keeps the reply addresses, and its Tags as the metadata', async () => {
    const [inbox] = await inboxes(1);
    const answer = await (
      await client()
    ).send(
      new SendEmailCommand({
        Source: 'Acme <app@acme.test>',
        Destination: { ToAddresses: [inbox!.address] },
        ReplyToAddresses: ['help@acme.test', 'Billing <billing@acme.test>'],
        Message: { Subject: { Data: 'fields via ses v1' }, Body: { Html: { Data: '<p>Hi</p>' } } },
        Tags: [{ Name: 'flow', Value: 'welcome' }],
      }),
    );
    const mail = await inbox!.expectMail({ subject: 'fields via ses v1' });
    expect(mail.provider).toEqual({ name: 'ses', id: answer.MessageId, tags: [], metadata: { flow: 'welcome' } });
    expect(mail.header('reply-to')).toBe('help@acme.test, Billing <billing@acme.test>');
  });

  it('is retried by the AWS SDK itself (3 attempts in all): every attempt in the attempt log, the last accepted', async () => {
    const [inbox] = await inboxes(1);
    // An outage rather than a rate limit: the SDK backs off a throttle from 500 ms, a server error from 100 ms.
    await inbox!.smtp.unavailable({ status: 503, times: 2 });
    const sent = await sesV1Driver.send(
      (await server()).apiURL,
      { from: 'app@acme.test', to: [inbox!.address], subject: 'retried', text: 'x' },
      { sdkRetries: true },
    );
    expect(sent).toMatchObject({ ok: true });
    const attempts = await inbox!.smtp.attempts();
    expect(attempts.map((a) => [a.code, a.outcome, a.rule])).toEqual([
      [503, 'deferred', 'unavailable'],
      [503, 'deferred', 'unavailable'],
      [200, 'accepted', null],
    ]);
    expect(attempts[0]!.userAgent).toMatch(/^aws-sdk-js\/.* api\/ses#/);
    await inbox!.expectMail({ subject: 'retried' });
  });

  it('refuses a templated send with the error SES gives a template it does not hold', async () => {
    const [inbox] = await inboxes(1);
    const error = await refusal(
      (await client()).send(
        new SendTemplatedEmailCommand({ Source: 'app@acme.test', Destination: { ToAddresses: [inbox!.address] }, Template: 'welcome', TemplateData: '{}' }),
      ),
    );
    expect(error).toMatchObject({ name: 'TemplateDoesNotExistException', status: 400 });
    expect(error.message).toContain('this test server stores none');
  });

  it('escapes the text of its XML answers: the SDK reads back the exact address it was refused for', async () => {
    const bad = 'a&b<c';
    const sent = await sesV1Driver.send((await server()).apiURL, { from: 'app@acme.test', to: [bad], subject: 'x', text: 'x' });
    expect(sent).toMatchObject({ ok: false, error: 'InvalidParameterValue', status: 400, message: expect.stringContaining(JSON.stringify(bad)) as string });
  });

  it('refuses more than 50 recipients', async () => {
    const to = Array.from({ length: 51 }, (_, i) => `r${i}@acme.test`);
    const sent = await sesV1Driver.send((await server()).apiURL, { from: 'app@acme.test', to, subject: 'x', text: 'x' });
    expect(sent).toMatchObject({ ok: false, error: 'InvalidParameterValue', status: 400, message: 'Recipient count exceeds 50.' });
  });
});

describe('POST / is SES v1 and GET / the web UI', () => {
  it.each([
    ['no Action', { Version: '2010-12-01' }, 'MissingAction'],
    ['an Action SES v1 does not send with', { Action: 'ListIdentities' }, 'InvalidAction'],
  ])('refuses a POST with %s in SES XML', async (_, form, code) => {
    const answer = await post(form);
    expect(answer).toMatchObject({ status: 400, type: 'text/xml' });
    expect(answer.body).toMatch(
      new RegExp(`^<\\?xml[^>]*>\\n<ErrorResponse xmlns="http://ses.amazonaws.com/doc/2010-12-01/"><Error><Type>Sender</Type><Code>${code}</Code>`),
    );
  });

  it('refuses an unsigned POST with MissingAuthenticationToken, and still serves the web UI on GET', async () => {
    const unsigned = await post({ Action: 'SendEmail' }, {});
    expect(unsigned.status).toBe(403);
    expect(unsigned.body).toContain('<Code>MissingAuthenticationToken</Code>');
    const page = await fetch(`${(await server()).apiURL}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });
});
