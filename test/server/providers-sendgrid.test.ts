// SendGrid beyond the contract suite's rows, through @sendgrid/mail where it
// can send the case and a raw request where it cannot (a body that is not
// JSON, an auth header it would never write): each personalization is a mail
// of its own, the sandbox validates and stores nothing, one bad
// personalization refuses the whole request, and what SendGrid keeps at
// home (templates, scheduled sends) is refused naming its field.
import { describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import type { SdkOutcome } from '../support/provider-sdks.js';
import { sendgridMail, sendgridOutcome } from '../support/providers/sendgrid.js';
import { sharedServer } from './helpers.js';

type SendData = Parameters<ReturnType<typeof sendgridMail>['send']>[0];

const server = sharedServer();
/** A server that takes small mail only: maxMessageBytes 20 000, so its body cap (request-body.ts) is about 289 000 bytes. */
const small = sharedServer({ maxMessageBytes: 20_000 });

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'sendgrid' })));
}

/** The SDK's answer: its status and X-Message-Id, or its refusal as the SDK raised it. */
async function send(data: object): Promise<{ ok: true; status: number; id: string | undefined } | SdkOutcome> {
  try {
    const [response] = await sendgridMail((await server()).apiURL, 'SG.test-key').send(data as SendData);
    const id = response.headers['x-message-id'] as string | undefined;
    return { ok: true, status: response.statusCode, id };
  } catch (error) {
    return sendgridOutcome(error);
  }
}

const plain = (to: string) => ({ from: 'app@acme.test', to, subject: 'Hi', text: 'Hello' });

describe('SendGrid v3 mail/send, beyond the contract rows', () => {
  it("sends each personalization as its own mail, its recipients, subject, substitutions, headers and custom args over the request's; all share one X-Message-Id", async () => {
    const [ann, bob, copy] = await inboxes(3);
    const answer = await send({
      from: 'Acme <app@acme.test>',
      replyTo: 'help@acme.test',
      subject: 'Hello {{name}}',
      text: 'Hi {{name}}, your code is {{code}}',
      html: '<p>Hi {{name}}</p><img src="cid:logo">',
      categories: ['welcome'],
      customArgs: { campaign: 'spring', user: 'none' },
      headers: { 'X-Team': 'growth', 'X-Tier': 'free' },
      // `content_id`: the SDK sends its typed `contentId` as it is, which SendGrid refuses (the test below).
      attachments: [{ content: Buffer.from('png').toString('base64'), filename: 'logo.png', type: 'image/png', disposition: 'inline', content_id: 'logo' }],
      personalizations: [
        { to: ann!.address, cc: copy!.address, substitutions: { name: 'Ann', code: 11 }, customArgs: { user: 'ann' } },
        { to: bob!.address, subject: 'Just for {{name}}', substitutions: { name: 'Bob', code: 22 }, headers: { 'X-Tier': 'pro' } },
      ],
    });
    expect(answer).toMatchObject({ ok: true, status: 202, id: expect.stringMatching(/^[\w-]{22}$/) as unknown });
    const id = (answer as { id: string }).id;

    const toAnn = await ann!.expectMail();
    expect(toAnn).toMatchObject({ subject: 'Hello Ann', cc: [copy!.address] });
    expect(toAnn.text).toContain('your code is 11');
    expect([toAnn.header('x-team'), toAnn.header('x-tier'), toAnn.header('reply-to')]).toEqual(['growth', 'free', 'help@acme.test']);
    expect(toAnn.provider).toEqual({ name: 'sendgrid', id, tags: ['welcome'], metadata: { campaign: 'spring', user: 'ann' } });
    expect(toAnn.attachments).toMatchObject([{ filename: 'logo.png', contentId: '<logo>' }]);
    await copy!.expectMail({ subject: 'Hello Ann' });

    const toBob = await bob!.expectMail();
    expect(toBob).toMatchObject({ subject: 'Just for Bob', cc: [] });
    expect(toBob.text).toContain('your code is 22');
    expect(toBob.header('x-tier')).toBe('pro');
    expect(toBob.provider).toEqual({ name: 'sendgrid', id, tags: ['welcome'], metadata: { campaign: 'spring', user: 'none' } });
    expect(await ann!.messages()).toHaveLength(1);
  });

  it("sandbox mode is SendGrid's validate-only send: 200, no X-Message-Id, nothing stored; an invalid request is still refused", async () => {
    const [inbox] = await inboxes(1);
    const sandbox = { mailSettings: { sandboxMode: { enable: true } } };
    expect(await send({ ...plain(inbox!.address), ...sandbox })).toEqual({ ok: true, status: 200, id: undefined });
    expect(await send({ ...plain('not-an-address'), ...sandbox })).toMatchObject({
      error: 'ResponseError',
      status: 400,
      field: 'personalizations.0.to.0.email',
    });
    expect(await inbox!.messages()).toEqual([]);
    expect(await inbox!.smtp.attempts()).toEqual([]);
  });

  it('one bad personalization refuses the whole request: nothing is stored for the good one', async () => {
    const [good] = await inboxes(1);
    const outcome = await send({ ...plain(good!.address), to: undefined, personalizations: [{ to: good!.address }, { to: 'Bob <bob@>' }] });
    expect(outcome).toMatchObject({ error: 'ResponseError', status: 400, field: 'personalizations.1.to.0.email' });
    expect(await good!.messages()).toEqual([]);
  });

  it.each([
    ['a template stored at SendGrid', { templateId: 'd-0123456789abcdef', dynamicTemplateData: { name: 'Ann' } }, 'template_id'],
    ['a scheduled send', { sendAt: 4_102_444_800 }, 'send_at'],
    ['a batch of scheduled sends', { batchId: 'YOUR_BATCH_ID' }, 'batch_id'],
  ])('refuses %s as unsupported, naming the field, and stores nothing', async (_, extra, field) => {
    const [inbox] = await inboxes(1);
    const outcome = await send({ ...plain(inbox!.address), ...extra });
    expect(outcome).toMatchObject({
      error: 'ResponseError',
      status: 400,
      field,
      message: expect.stringContaining('not supported by this test server') as unknown,
    });
    expect(await inbox!.messages()).toEqual([]);
  });

  it("refuses an inline attachment whose id came as the SDK's typed `contentId`, as SendGrid does (sendgrid-nodejs#1080)", async () => {
    const [inbox] = await inboxes(1);
    const attachment = { content: Buffer.from('png').toString('base64'), filename: 'logo.png', disposition: 'inline', contentId: 'logo' };
    const outcome = await send({ ...plain(inbox!.address), attachments: [attachment] });
    expect(outcome).toMatchObject({ error: 'ResponseError', status: 400, field: 'attachments.0.content_id' });
  });

  it('refuses an attachment that is not base64, naming it', async () => {
    const [inbox] = await inboxes(1);
    const outcome = await send({ ...plain(inbox!.address), attachments: [{ content: 'not base64!', filename: 'a.txt' }] });
    expect(outcome).toMatchObject({ error: 'ResponseError', status: 400, field: 'attachments.0.content' });
    expect(await inbox!.messages()).toEqual([]);
  });

  it("refuses more than 1000 recipients in one request (SendGrid's limit)", async () => {
    const [inbox] = await inboxes(1);
    const { domains } = await server();
    const many = [inbox!.address, ...Array.from({ length: 1000 }, (_, i) => `r${i}@${domains[0]}`)];
    const outcome = await send({ ...plain(inbox!.address), to: undefined, personalizations: [{ to: many.slice(0, 500) }, { to: many.slice(500) }] });
    expect(outcome).toMatchObject({ error: 'ResponseError', status: 400, field: 'personalizations', message: expect.stringContaining('1000') as unknown });
    expect(await inbox!.messages()).toEqual([]);
  });

  it.each([
    ['a mail over maxMessageBytes', 30_000],
    ['a body over the cap, refused as it is read', 300_000],
  ])('answers %s with 413, storing nothing', async (_, bytes) => {
    const { apiURL, domains } = await small();
    const inbox = await createInbox({ apiURL, domain: domains[0], prefix: 'sendgrid' });
    const attachments = [{ content: Buffer.alloc(bytes, 7).toString('base64'), filename: 'big.bin' }];
    const outcome = await sendgridMail(apiURL, 'SG.test-key')
      .send({ ...plain(inbox.address), attachments })
      .catch(sendgridOutcome);
    expect(outcome).toMatchObject({ error: 'ResponseError', status: 413, field: null });
    expect(await inbox.messages()).toEqual([]);
  });

  it("a rate limit carries SendGrid's X-RateLimit-* headers (the reset in epoch seconds) and Retry-After", async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.rateLimit({ retryAfter: 3_000 });
    const before = Math.floor(Date.now() / 1000);
    const error = await sendgridMail((await server()).apiURL, 'SG.test-key')
      .send(plain(inbox!.address) as SendData)
      .catch((e: unknown) => e as { code: number; response: { headers: Record<string, string>; body: unknown } });
    expect(error).toMatchObject({ code: 429, response: { body: { errors: [{ message: 'too many requests', field: null, help: null }] } } });
    const { headers } = (error as { response: { headers: Record<string, string> } }).response;
    expect([headers['x-ratelimit-limit'], headers['x-ratelimit-remaining'], headers['retry-after']]).toEqual(['500', '0', '3']);
    expect(Number(headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(before + 3);
    expect(Number(headers['x-ratelimit-reset'])).toBeLessThanOrEqual(before + 5);
  });

  it.each([
    ['a body that is not JSON', { authorization: 'Bearer SG.k' }, '{"personalizations": [', 400],
    ['an Authorization header that is not Bearer', { authorization: 'Basic YXBpOmtleQ==' }, '{}', 401],
  ])("answers %s in SendGrid's error shape (a raw request: the SDK never sends one)", async (_, headers, body, status) => {
    const answer = await fetch(`${(await server()).apiURL}/v3/mail/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    expect(answer.status).toBe(status);
    expect(await answer.json()).toMatchObject({ errors: [{ message: expect.any(String) as unknown, field: null, help: null }] });
  });
});
