// Mailgun beyond the contract suite's rows (providers.test.ts), through
// mailgun.js where it can send the call and a raw fetch where it cannot:
// a MIME send whose envelope holds a Bcc recipient its headers do not, the
// fields that become the stamp (`o:tag`, `v:`), a reply address and an
// inline image, test mode (answered, nothing stored), a wrong Basic user,
// the sends that need what Mailgun stores or schedules, a urlencoded body,
// malformed bodies and too many recipients.
import Mailgun from 'mailgun.js';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/index.js';
import { sharedServer } from './helpers.js';

const server = sharedServer();
/** A server that takes messages of at most 32 KiB, and bodies of about 300 KiB (request-body.ts bodyCapFor). */
const small = sharedServer({ maxMessageBytes: 32 * 1024 });
const DOMAIN = 'mg.acme.test';

async function inboxes(count: number): Promise<Inbox[]> {
  const { apiURL, domains } = await server();
  return Promise.all(Array.from({ length: count }, () => createInbox({ apiURL, domain: domains[0], prefix: 'mailgun' })));
}

async function client(username = 'api') {
  return new Mailgun(FormData).client({ username, key: 'key-test', url: (await server()).apiURL });
}

/** What mailgun.js throws: its APIError, with the status and the answer's message as `details`. */
async function apiError(sending: Promise<unknown>): Promise<{ type: string; status: number; details: string }> {
  const error = (await sending.then(
    () => undefined,
    (e: unknown) => e,
  )) as { type: string; status: number; details: string } | undefined;
  expect(error, 'the send should have been refused').toBeDefined();
  return { type: error!.type, status: error!.status, details: error!.details };
}

const basic = `Basic ${Buffer.from('api:key-test').toString('base64')}`;

async function post(path: string, body: string | FormData | URLSearchParams, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const answer = await fetch(`${(await server()).apiURL}${path}`, { method: 'POST', headers: { authorization: basic, ...headers }, body });
  return { status: answer.status, body: await answer.text() };
}

describe('Mailgun messages.mime', () => {
  it('delivers to the `to` envelope, a Bcc recipient too, whose address the headers never show', async () => {
    const [to, bcc] = await inboxes(2);
    const source = await new MailComposer({ from: 'app@acme.test', to: to!.address, subject: 'mime via mailgun', text: 'raw body' }).compile().build();
    const mg = await client();
    const answer = await mg.messages.create(DOMAIN, { to: [to!.address, bcc!.address], message: source, 'o:tag': ['signup'], 'v:user': '42' });
    expect(answer).toMatchObject({ status: 200, message: 'Queued. Thank you.' });
    expect(answer.id).toMatch(new RegExp(`^<\\d{14}\\.\\d{6}\\.\\d{5}@${DOMAIN.replace(/\./g, '\\.')}>$`));
    for (const inbox of [to!, bcc!]) {
      const mail = await inbox.expectMail({ subject: 'mime via mailgun' });
      expect(mail.provider).toEqual({ name: 'mailgun', id: answer.id, tags: ['signup'], metadata: { user: '42' } });
      expect(mail.to).toEqual([to!.address]);
      expect(JSON.stringify(mail.headers)).not.toContain(bcc!.address);
    }
  });

  it("refuses a call without the message, naming the 'message' field", async () => {
    const [inbox] = await inboxes(1);
    const form = new FormData();
    form.append('to', inbox!.address);
    const answer = await post(`/v3/${DOMAIN}/messages.mime`, form);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ message: expect.stringContaining("'message' parameter is missing") as string });
  });
});

describe('Mailgun messages', () => {
  it('keeps the tags, variables, a comma-separated `to`, the reply address and an inline image', async () => {
    const [first, second] = await inboxes(2);
    const mg = await client();
    const answer = await mg.messages.create(DOMAIN, {
      from: 'Acme <app@acme.test>',
      to: `${first!.address}, Second <${second!.address}>`,
      subject: 'fields via mailgun',
      html: '<p>Logo <img src="cid:logo.png"></p>',
      'h:Reply-To': 'Support <help@acme.test>',
      'o:tag': ['welcome', 'v2'],
      'v:plan': 'pro',
      inline: [{ filename: 'logo.png', data: Buffer.from('not really a png') }],
    });
    for (const inbox of [first!, second!]) {
      const mail = await inbox.expectMail({ subject: 'fields via mailgun' });
      expect(mail.provider).toEqual({ name: 'mailgun', id: answer.id, tags: ['welcome', 'v2'], metadata: { plan: 'pro' } });
      expect(mail.header('reply-to')).toBe('Support <help@acme.test>');
      expect(mail.attachments).toMatchObject([{ filename: 'logo.png', contentType: 'image/png', contentId: '<logo.png>' }]);
    }
  });

  it('in test mode (o:testmode) answers as sent and stores nothing, as Mailgun does', async () => {
    const [inbox] = await inboxes(1);
    const mg = await client();
    const answer = await mg.messages.create(DOMAIN, { from: 'app@acme.test', to: inbox!.address, subject: 'test mode', text: 'x', 'o:testmode': 'yes' });
    expect(answer).toMatchObject({ status: 200, message: 'Queued. Thank you.', id: expect.stringMatching(/@mg\.acme\.test>$/) as string });
    expect(await inbox!.messages()).toEqual([]);
    expect(await inbox!.smtp.attempts()).toEqual([]);
  });

  it('takes a urlencoded body, as Mailgun does', async () => {
    const [inbox] = await inboxes(1);
    const body = new URLSearchParams({ from: 'app@acme.test', to: inbox!.address, subject: 'urlencoded', text: 'plain form' });
    const answer = await post(`/v3/${DOMAIN}/messages`, body);
    expect(answer.status).toBe(200);
    await inbox!.expectMail({ subject: 'urlencoded' });
  });

  it('refuses a Basic user other than `api` with its 401 Forbidden, through the SDK', async () => {
    const [inbox] = await inboxes(1);
    const mg = await client('apikey');
    const error = await apiError(mg.messages.create(DOMAIN, { from: 'app@acme.test', to: inbox!.address, subject: 'x', text: 'x' }));
    expect(error).toMatchObject({ type: 'MailgunAPIError', status: 401, details: expect.stringMatching(/^Forbidden: the user is "apikey"/) as string });
  });

  it.each([
    ['a stored template', { template: 'welcome' }, "Templates stored at Mailgun ('template')"],
    ['a scheduled send', { 'o:deliverytime': 'Thu, 13 Oct 2033 18:02:00 +0000' }, "Scheduled sending ('o:deliverytime')"],
    ['batch sending', { 'recipient-variables': '{}' }, "Batch sending ('recipient-variables')"],
  ])('refuses %s as unsupported, saying what to send instead', async (_, extra, says) => {
    const [inbox] = await inboxes(1);
    const mg = await client();
    const error = await apiError(mg.messages.create(DOMAIN, { from: 'app@acme.test', to: inbox!.address, subject: 'x', text: 'x', ...extra }));
    expect(error).toMatchObject({ type: 'MailgunAPIError', status: 400 });
    expect(error.details).toContain(says);
    expect(error.details).toContain('not');
  });

  it('refuses more than 1,000 recipients', async () => {
    const mg = await client();
    const to = Array.from({ length: 1001 }, (_, i) => `r${i}@acme.test`);
    const error = await apiError(mg.messages.create(DOMAIN, { from: 'app@acme.test', to, subject: 'x', text: 'x' }));
    expect(error).toMatchObject({ status: 400, details: expect.stringContaining('at most 1000') as string });
  });

  it.each([
    ['a multipart body cut short', '--b\r\nContent-Disposition: form-data; name="from"\r\n\r\napp@acme.test', 'multipart/form-data; boundary=b', 'malformed'],
    ['a multipart type with no boundary', 'from=x', 'multipart/form-data', 'cannot be read'],
    ['a JSON body', '{"from": "app@acme.test"}', 'application/json', 'Expected a multipart/form-data body'],
  ])('refuses %s with a 400 naming what is wrong, storing nothing', async (_, body, type, says) => {
    const answer = await post(`/v3/${DOMAIN}/messages`, body, { 'content-type': type });
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.body) as { message: string }).message).toContain(says);
  });

  it('refuses a body over the cap it is read under with its 413, storing nothing', async () => {
    const { apiURL, domains } = await small();
    const inbox = await createInbox({ apiURL, domain: domains[0], prefix: 'mailgun' });
    const mg = new Mailgun(FormData).client({ username: 'api', key: 'key-test', url: apiURL });
    const attachment = [{ filename: 'big.bin', data: Buffer.alloc(400 * 1024, 'a') }];
    const error = await apiError(mg.messages.create(DOMAIN, { from: 'app@acme.test', to: inbox.address, subject: 'big', text: 'x', attachment }));
    expect(error).toMatchObject({ type: 'MailgunAPIError', status: 413, details: expect.stringContaining("over this server's limit") as string });
    expect(await inbox.messages()).toEqual([]);
  });
});
