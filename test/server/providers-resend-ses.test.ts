// Resend and SES v2 beyond the contract suite's rows, through their SDKs
// where the SDK can send the case and a raw request where it cannot: a
// Resend batch, strict (one bad mail refuses the call and nothing is
// stored) and permissive (the good ones taken, the bad ones listed by
// index); a mail over maxMessageBytes refused with nothing stored; SES v2's
// Raw content (nodemailer's SES transport: every recipient in Destination,
// the Bcc in no header) and its inline template.
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import nodemailer from 'nodemailer';
import { Resend } from 'resend';
import { describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import { call, listPath, sharedServer } from './helpers.js';

const server = sharedServer();
/** A server that takes small mail only. */
const small = sharedServer({ maxMessageBytes: 20_000 });

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'resend-ses' })));
}

const resend = async () => new Resend('re_test_key', { baseUrl: (await server()).apiURL });
const sesClient = async () =>
  new SESv2Client({ endpoint: (await server()).apiURL, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'x' }, maxAttempts: 1 });

describe('Resend batches', () => {
  it('strict (the default): one bad mail refuses the whole batch, naming it, and none is stored', async () => {
    const [a, b] = await inboxes(2);
    const { data, error } = await (
      await resend()
    ).batch.send([
      { from: 'app@acme.test', to: a!.address, subject: 'one', text: 'x' },
      { from: 'app@acme.test', to: 'not-an-address', subject: 'two', text: 'x' },
      { from: 'app@acme.test', to: b!.address, subject: 'three', text: 'x' },
    ]);
    expect(data).toBeNull();
    expect(error).toMatchObject({ name: 'validation_error', message: expect.stringContaining('[1].to') });
    const s = await server();
    for (const inbox of [a!, b!]) expect((await call(s, listPath(inbox.address))).json.messages).toEqual([]);
  });

  it('permissive: the good mails stored and answered with ids, the bad one listed by its index', async () => {
    const [a, b] = await inboxes(2);
    const { data, error } = await (
      await resend()
    ).batch.send(
      [
        { from: 'app@acme.test', to: a!.address, subject: 'one', text: 'x' },
        { from: 'app@acme.test', to: 'not-an-address', subject: 'two', text: 'x' },
        { from: 'app@acme.test', to: b!.address, subject: 'three', text: 'x' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(error).toBeNull();
    expect(data!.data).toHaveLength(2);
    expect((data as unknown as { errors: { index: number; message: string }[] }).errors).toEqual([{ index: 1, message: expect.stringContaining('to') }]);
    expect((await a!.expectMail({ subject: 'one' })).provider?.id).toBe(data!.data[0]!.id);
    expect((await b!.expectMail({ subject: 'three' })).provider?.id).toBe(data!.data[1]!.id);
  });

  it('a rate limit on one mail refuses the whole batch, permissive or not: the call is what is limited', async () => {
    const [a, b] = await inboxes(2);
    await b!.smtp.rateLimit({ retryAfter: 3_000 });
    const { error, headers } = await (
      await resend()
    ).batch.send(
      [
        { from: 'app@acme.test', to: a!.address, subject: 'one', text: 'x' },
        { from: 'app@acme.test', to: b!.address, subject: 'two', text: 'x' },
      ],
      { batchValidation: 'permissive' },
    );
    expect(error).toMatchObject({ name: 'rate_limit_exceeded' });
    expect(headers?.['retry-after']).toBe('3');
    expect((await call(await server(), listPath(a!.address))).json.messages).toEqual([]);
    // Both recipients' logs hold the refused call.
    expect((await a!.smtp.attempts()).map((x) => [x.code, x.outcome])).toEqual([[429, 'deferred']]);
  });
});

describe('the slow and disconnect rules over an API', () => {
  const send = async (to: string, signal?: AbortSignal) =>
    fetch(`${(await server()).apiURL}/emails`, {
      method: 'POST',
      headers: { authorization: 'Bearer re_x', 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'app@acme.test', to, subject: 'held', text: 'x' }),
      ...(signal ? { signal } : {}),
    });

  it('slow holds the answer (the log shows the call answered the hold after it began), then the mail is stored', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.slow({ delayMs: 300, times: 1 });
    expect((await send(inbox!.address)).status).toBe(200);
    const [attempt] = await inbox!.smtp.attempts();
    expect(attempt!.at.getTime() - attempt!.beganAt!.getTime()).toBeGreaterThanOrEqual(300);
    await inbox!.expectMail({ subject: 'held' });
  });

  it('a caller that hangs up while the answer is held is logged as dropped by the slow rule, and nothing is stored', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.slow({ delayMs: 60_000, times: 1 });
    const gone = new AbortController();
    const held = send(inbox!.address, gone.signal).catch((error: unknown) => error);
    // Hang up once the server has the call (its attempt is logged only when it ends, so wait for the rule to be spent).
    await expect.poll(async () => (await inbox!.smtp.rules())[0]!.remaining).toBe(0);
    gone.abort();
    expect(await held).toBeInstanceOf(Error);
    await expect.poll(async () => (await inbox!.smtp.attempts()).map((a) => [a.outcome, a.rule])).toEqual([['dropped', 'slow']]);
    expect((await call(await server(), listPath(inbox!.address))).json.messages).toEqual([]);
  });

  it('disconnect closes the connection without an answer; the SDK reports it, and the log says dropped', async () => {
    const [inbox] = await inboxes(1);
    await inbox!.smtp.disconnect();
    const { error } = await (await resend()).emails.send({ from: 'app@acme.test', to: inbox!.address, subject: 'cut', text: 'x' });
    expect(error).not.toBeNull();
    expect((await inbox!.smtp.attempts()).map((a) => [a.outcome, a.code, a.rule])).toEqual([['dropped', null, 'disconnect']]);
  });
});

describe('limits', () => {
  it('a Resend mail over maxMessageBytes is refused 413 and not stored', async () => {
    const s = await small();
    const inbox = await createInbox({ apiURL: s.apiURL, domain: s.domains[0] });
    const { error } = await new Resend('re_x', { baseUrl: s.apiURL }).emails.send({
      from: 'app@acme.test',
      to: inbox.address,
      subject: 'big',
      text: 'x',
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(30_000, 1) }],
    });
    expect(error).toMatchObject({ name: 'validation_error', statusCode: 413, message: expect.stringContaining('over this server') });
    expect((await call(s, listPath(inbox.address))).json.messages).toEqual([]);
  });

  it('bad base64 in a Resend attachment is refused naming the field', async () => {
    const [inbox] = await inboxes(1);
    const answer = await fetch(`${(await server()).apiURL}/emails`, {
      method: 'POST',
      headers: { authorization: 'Bearer re_x', 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'app@acme.test', to: inbox!.address, subject: 's', text: 't', attachments: [{ filename: 'a', content: '!!not base64!!' }] }),
    });
    expect(answer.status).toBe(422);
    expect(await answer.json()).toMatchObject({ name: 'validation_error', message: expect.stringContaining('attachments[0].content') });
  });
});

describe('SES v2 Raw and Template', () => {
  it("takes nodemailer's SES transport: every recipient in Destination, the Bcc's copy in no header", async () => {
    const [to, bcc] = await inboxes(2);
    const transport = nodemailer.createTransport({ SES: { sesClient: await sesClient(), SendEmailCommand } });
    const info = await transport.sendMail({ from: 'Acme <app@acme.test>', to: to!.address, bcc: bcc!.address, subject: 'Raw receipt', text: 'x' });
    for (const inbox of [to!, bcc!]) {
      const mail = await inbox.expectMail({ subject: 'Raw receipt' });
      expect(mail.provider?.name).toBe('ses');
      expect(info.messageId).toContain(mail.provider!.id);
      expect(JSON.stringify(mail.headers)).not.toContain(bcc!.address);
    }
  });

  it('renders an inline template with its data; a stored one is refused as BadRequestException', async () => {
    const [inbox] = await inboxes(1);
    const ses = await sesClient();
    await ses.send(
      new SendEmailCommand({
        FromEmailAddress: 'app@acme.test',
        Destination: { ToAddresses: [inbox!.address] },
        Content: {
          Template: {
            TemplateContent: { Subject: 'Hi {{name}}', Text: 'Your code is {{code}}', Html: '<p>{{name}}</p>' },
            TemplateData: JSON.stringify({ name: 'Ann <admin>', code: '482913' }),
          },
        },
      }),
    );
    const mail = await inbox!.expectMail({ subject: 'Hi Ann <admin>' });
    expect(mail.codes).toEqual(['482913']);
    expect(mail.html).toContain('Ann &lt;admin&gt;');
    const stored = await ses
      .send(
        new SendEmailCommand({
          FromEmailAddress: 'app@acme.test',
          Destination: { ToAddresses: [inbox!.address] },
          Content: { Template: { TemplateName: 'welcome', TemplateData: '{}' } },
        }),
      )
      .catch((error: unknown) => error);
    expect(stored).toMatchObject({ name: 'BadRequestException', message: expect.stringContaining('TemplateContent') });
  });
});
