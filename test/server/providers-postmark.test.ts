// Postmark beyond the contract suite's rows, through the postmark SDK where
// it can send the case and a raw request where it cannot (a body that is not
// JSON, a call with the wrong token header): a batch answers each message on
// its own inside a 200 and takes the good ones, the inactive-recipient error
// names its recipients as the SDK reads them, and template sends (their
// templates live at Postmark) are refused with Postmark's own code.
import { describe, expect, it } from 'vitest';
import type { Message } from 'postmark';
import { createInbox, type Inbox } from '../../src/index.js';
import { postmarkClient } from '../support/providers/postmark.js';
import { sharedServer } from './helpers.js';

const server = sharedServer();
/** A server that takes small mail only: maxMessageBytes 20 000, so its body cap (request-body.ts) is about 289 000 bytes. */
const small = sharedServer({ maxMessageBytes: 20_000 });

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'postmark' })));
}

const client = async () => postmarkClient((await server()).apiURL);
const plain = (to: string, subject = 'Hi'): Message => ({ From: 'app@acme.test', To: to, Subject: subject, TextBody: 'Hello' });

/** What the SDK threw: its class's name and Postmark's codes. */
const thrown = (error: unknown) => {
  const e = error as { name: string; code: number; statusCode: number; message: string; recipients?: string[] };
  return { name: e.name, code: e.code, statusCode: e.statusCode, message: e.message, recipients: e.recipients };
};

describe('Postmark /email and /email/batch, beyond the contract rows', () => {
  it('keeps Tag, Metadata, ReplyTo, named recipients and an inline cid: attachment; takes MessageStream and tracking and ignores them', async () => {
    const [inbox] = await inboxes(1);
    const answer = await (
      await client()
    ).sendEmail({
      ...plain(`"Ann, Admin" <${inbox!.address}>`, 'Receipt'),
      HtmlBody: '<p>Thanks</p><img src="cid:logo">',
      ReplyTo: 'help@acme.test',
      Tag: 'receipt',
      Metadata: { order: '1042' },
      MessageStream: 'outbound',
      TrackOpens: true,
      Attachments: [{ Name: 'logo.png', Content: Buffer.from('png').toString('base64'), ContentType: 'image/png', ContentID: 'cid:logo' }],
    });
    expect(answer).toMatchObject({ To: `"Ann, Admin" <${inbox!.address}>`, ErrorCode: 0, Message: 'OK' });
    expect(answer.MessageID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(Number.isNaN(Date.parse(answer.SubmittedAt))).toBe(false);
    const mail = await inbox!.expectMail({ subject: 'Receipt' });
    expect(mail.provider).toEqual({ name: 'postmark', id: answer.MessageID, tags: ['receipt'], metadata: { order: '1042' } });
    expect(mail.header('reply-to')).toBe('help@acme.test');
    expect(mail.header('to')).toContain('Ann, Admin');
    expect(mail.attachments).toMatchObject([{ filename: 'logo.png', contentId: '<logo>' }]);
  });

  it('a batch answers each message in a 200: the good ones taken, a bad one and an inactive recipient with their ErrorCode', async () => {
    const [good, inactive] = await inboxes(2);
    await inactive!.smtp.reject();
    const answers = await (await client()).sendEmailBatch([plain(good!.address, 'batch'), plain('nobody-at-all', 'batch'), plain(inactive!.address, 'batch')]);
    expect(answers).toMatchObject([
      { To: good!.address, ErrorCode: 0, Message: 'OK' },
      { ErrorCode: 300, Message: expect.stringContaining('nobody-at-all') as unknown },
      { ErrorCode: 406, Message: expect.stringContaining(`Found inactive addresses: ${inactive!.address}.`) as unknown },
    ]);
    expect(answers[1]).not.toHaveProperty('MessageID');
    const mail = await good!.expectMail({ subject: 'batch' });
    expect(mail.provider?.id).toBe(answers[0]!.MessageID);
    expect(await inactive!.messages()).toEqual([]);
    expect(await inactive!.smtp.attempts()).toMatchObject([{ stage: 'api', code: 422, outcome: 'rejected', provider: 'postmark' }]);
  });

  it('names the inactive recipients where the SDK reads them (InactiveRecipientsError.recipients)', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.reject();
    const error = await (await client()).sendEmail(plain(inbox!.address)).catch(thrown);
    expect(error).toMatchObject({ name: 'InactiveRecipientsError', code: 406, statusCode: 422, recipients: [inbox!.address] });
  });

  it('answers a batch message over maxMessageBytes in its place, and a body over the cap with 413', async () => {
    const { apiURL, domains } = await small();
    const inbox = await createInbox({ apiURL, domain: domains[0], prefix: 'postmark' });
    const big = (bytes: number): Message => ({
      ...plain(inbox.address, 'big'),
      Attachments: [{ Name: 'big.bin', Content: Buffer.alloc(bytes, 7).toString('base64'), ContentType: 'application/octet-stream', ContentID: null }],
    });
    const answers = await postmarkClient(apiURL).sendEmailBatch([plain(inbox.address, 'small'), big(30_000)]);
    expect(answers).toMatchObject([{ ErrorCode: 0 }, { ErrorCode: 300, Message: expect.stringContaining('maxMessageBytes') as unknown }]);
    expect((await inbox.messages()).map((m) => m.subject)).toEqual(['small']);
    const error = await postmarkClient(apiURL).sendEmail(big(300_000)).catch(thrown);
    expect(error).toMatchObject({ name: 'UnknownError', statusCode: 413 });
  });

  it('refuses a batch of more than 500 messages whole, with ErrorCode 410, storing none of it', async () => {
    const [inbox] = await inboxes(1);
    const error = await (await client()).sendEmailBatch(Array.from({ length: 501 }, () => plain(inbox!.address))).catch(thrown);
    expect(error).toMatchObject({ name: 'ApiInputError', code: 410, statusCode: 422 });
    expect(await inbox!.messages()).toEqual([]);
  });

  it.each([
    [
      "too many recipients (51, over Postmark's 50)",
      (to: string) => ({ ...plain(to), Cc: Array.from({ length: 50 }, (_, i) => `cc${i}@acme.test`).join(',') }),
    ],
    [
      'an attachment that is not base64',
      (to: string) => ({ ...plain(to), Attachments: [{ Name: 'a.txt', Content: '%%%', ContentType: 'text/plain', ContentID: null }] }),
    ],
  ])('refuses %s as an invalid email request, storing nothing', async (_, make) => {
    const [inbox] = await inboxes(1);
    const error = await (await client()).sendEmail(make(inbox!.address)).catch(thrown);
    expect(error).toMatchObject({ name: 'InvalidEmailRequestError', code: 300, statusCode: 422 });
    expect(await inbox!.messages()).toEqual([]);
  });

  it('refuses template sends (their templates are stored at Postmark) with ErrorCode 1101, saying what to send instead', async () => {
    const pm = await client();
    const template = { From: 'app@acme.test', To: 'ann@acme.test', TemplateAlias: 'welcome', TemplateModel: { name: 'Ann' } };
    const one = await pm.sendEmailWithTemplate(template).catch(thrown);
    expect(one).toMatchObject({
      name: 'ApiInputError',
      code: 1101,
      statusCode: 422,
      message: expect.stringMatching(/TemplateAlias "welcome".*\/email/) as unknown,
    });
    const batch = await pm.sendEmailBatchWithTemplates([{ ...template, TemplateAlias: undefined, TemplateId: 1234 }]).catch(thrown);
    expect(batch).toMatchObject({ name: 'ApiInputError', code: 1101, message: expect.stringContaining('TemplateId 1234') as unknown });
  });

  it.each([
    ['a body that is not JSON', '/email', { 'x-postmark-server-token': 't' }, '{"From": ', 422, 402],
    ['an account token instead of a server token', '/email', { 'x-postmark-account-token': 't' }, '{}', 401, 10],
    ['a blank server token', '/email/batch', { 'x-postmark-server-token': ' ' }, '[]', 401, 10],
  ])("answers %s in Postmark's shape (a raw request: the SDK never sends one)", async (_, path, headers, body, status, code) => {
    const answer = await fetch(`${(await server()).apiURL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect(answer.status).toBe(status);
    expect(await answer.json()).toMatchObject({ ErrorCode: code, Message: expect.any(String) as unknown });
  });

  it('a rate limit answers 429 with ErrorCode 429 and a Retry-After', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.rateLimit({ retryAfter: 4_000 });
    const answer = await fetch(`${(await server()).apiURL}/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-postmark-server-token': 't' },
      body: JSON.stringify(plain(inbox!.address)),
    });
    expect([answer.status, answer.headers.get('retry-after')]).toEqual([429, '4']);
    expect(await answer.json()).toMatchObject({ ErrorCode: 429 });
  });
});
