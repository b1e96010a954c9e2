// The providers' own SDKs, each pointed at a mailroom server the way its
// guide says (docs/providers.md), behind one small interface so a single
// contract test (test/server/providers.test.ts) runs every provider through
// what a user's app really calls. Each driver turns its SDK's way of
// failing (Resend returns `{ error }`, the others throw their own classes)
// into one `SdkOutcome` that names the SDK's error as the SDK does. Where an
// SDK raises one class for every refusal (SendGrid's `ResponseError`), the
// outcome also carries the status and the field the answer names.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SESClient, SendEmailCommand as SendEmailV1Command, SendRawEmailCommand } from '@aws-sdk/client-ses';
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { BrevoClient } from '@getbrevo/brevo';
import sgMail from '@sendgrid/mail';
import Mailgun from 'mailgun.js';
import MailComposer from 'nodemailer/lib/mail-composer';
import { ServerClient } from 'postmark';
import type { ProviderName } from '../../src/contract/providers.js';
import { Resend } from 'resend';

export interface TestMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly cc?: readonly string[];
  readonly bcc?: readonly string[];
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
  readonly attachment?: { readonly filename: string; readonly content: Buffer; readonly contentType: string };
  readonly header?: readonly [string, string];
}

export type SdkOutcome =
  | { readonly ok: true; readonly id: string }
  /**
   * `error`: the SDK's own name for it (an exception class's name, Resend's `name`); `status` when the SDK says it;
   * `field`: the field the answer names, for an SDK whose one error class tells refusals apart by it (SendGrid's).
   */
  | { readonly ok: false; readonly error: string; readonly status: number | undefined; readonly message: string; readonly field?: string | null };

export interface SendAs {
  /** The API key (or credentials) to send with; undefined: a good one; null: none at all. */
  readonly key?: string | null;
  /** The SDK's own retries, where it has them: off unless asked, so a refusal reaches the test at once. */
  readonly sdkRetries?: boolean;
}

export interface ProviderDriver {
  readonly provider: ProviderName;
  /** `resend 6.38.0`: which SDK, at which version, as the test names it. */
  readonly sdk: string;
  send(baseURL: string, mail: TestMail, as?: SendAs): Promise<SdkOutcome>;
}

/** The installed version of a package, read from its package.json (not all export it). */
const version = (name: string): string =>
  (JSON.parse(readFileSync(join(fileURLToPath(new URL('../../node_modules/', import.meta.url)), name, 'package.json'), 'utf8')) as { version: string }).version;

function thrown(error: unknown): SdkOutcome {
  const e = error as {
    name?: string;
    constructor?: { name?: string };
    message?: string;
    $metadata?: { httpStatusCode?: number };
    code?: number;
    statusCode?: number;
    status?: number;
  };
  return {
    ok: false,
    error: e.name ?? e.constructor?.name ?? 'Error',
    status: e.$metadata?.httpStatusCode ?? e.statusCode ?? e.status ?? e.code,
    message: e.message ?? String(error),
  };
}

export const resendDriver: ProviderDriver = {
  provider: 'resend',
  sdk: `resend ${version('resend')}`,
  async send(baseURL, mail, as = {}) {
    // With no key the SDK refuses before any request (its constructor throws); a raw request gets the server's own refusal.
    if (as.key === null) {
      const answer = await fetch(`${baseURL}/emails`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const body = (await answer.json()) as { name: string; message: string };
      return { ok: false, error: body.name, status: answer.status, message: body.message };
    }
    const resend = new Resend(as.key ?? 're_test_key', { baseUrl: baseURL });
    const { data, error } = await resend.emails.send({
      from: mail.from,
      to: [...mail.to],
      cc: mail.cc && [...mail.cc],
      bcc: mail.bcc && [...mail.bcc],
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      headers: mail.header && { [mail.header[0]]: mail.header[1] },
      attachments: mail.attachment && [{ filename: mail.attachment.filename, content: mail.attachment.content, contentType: mail.attachment.contentType }],
    } as Parameters<Resend['emails']['send']>[0]);
    if (error) return { ok: false, error: error.name, status: (error as { statusCode?: number }).statusCode ?? undefined, message: error.message };
    return { ok: true, id: data.id };
  },
};

export const sesV2Driver: ProviderDriver = {
  provider: 'ses',
  sdk: `@aws-sdk/client-sesv2 ${version('@aws-sdk/client-sesv2')}`,
  async send(baseURL, mail, as = {}) {
    const client = new SESv2Client({
      endpoint: baseURL,
      region: 'us-east-1',
      credentials: { accessKeyId: as.key ?? 'AKIDTEST', secretAccessKey: 'test-secret' },
      maxAttempts: as.sdkRetries ? 3 : 1,
    });
    if (as.key === null) {
      // Unsigned: what an app without credentials would send, were the SDK to let it.
      const answer = await fetch(`${baseURL}/v2/email/outbound-emails`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      return {
        ok: false,
        error: answer.headers.get('x-amzn-errortype') ?? '',
        status: answer.status,
        message: ((await answer.json()) as { message: string }).message,
      };
    }
    try {
      const answer = await client.send(
        new SendEmailCommand({
          FromEmailAddress: mail.from,
          Destination: { ToAddresses: [...mail.to], CcAddresses: mail.cc && [...mail.cc], BccAddresses: mail.bcc && [...mail.bcc] },
          Content: {
            Simple: {
              Subject: { Data: mail.subject },
              Body: { ...(mail.text === undefined ? {} : { Text: { Data: mail.text } }), ...(mail.html === undefined ? {} : { Html: { Data: mail.html } }) },
              Headers: mail.header && [{ Name: mail.header[0], Value: mail.header[1] }],
              Attachments: mail.attachment && [
                { FileName: mail.attachment.filename, RawContent: mail.attachment.content, ContentType: mail.attachment.contentType },
              ],
            },
          },
        }),
      );
      return { ok: true, id: answer.MessageId! };
    } catch (error) {
      return thrown(error);
    } finally {
      client.destroy();
    }
  },
};

/** `@sendgrid/mail`'s MailService (the package exports an instance; its class is untyped). */
type MailService = typeof sgMail;

/**
 * A SendGrid mail service pointed at `baseURL` as the guide says: the key
 * set first (setApiKey resets the base URL), then the client's base URL.
 * Without a key it sends no Authorization header at all.
 */
export function sendgridMail(baseURL: string, key: string | undefined): MailService {
  const service = new (sgMail.constructor as new () => MailService)();
  if (key !== undefined) service.setApiKey(key);
  // The SDK's own client, which its types leave out.
  (service as unknown as { client: { setDefaultRequest(key: string, value: string): void } }).client.setDefaultRequest('baseUrl', `${baseURL}/`);
  return service;
}

/** What `@sendgrid/mail` threw, as an outcome: a `ResponseError` (its `name` is Error's; its class says it) with the answer's status and first error. */
export function sendgridOutcome(error: unknown): SdkOutcome {
  const e = error as {
    constructor: { name: string };
    code?: number;
    message: string;
    response?: { body?: { errors?: { message: string; field: string | null }[] } };
  };
  const first = e.response?.body?.errors?.[0];
  return { ok: false, error: e.constructor.name, status: e.code, message: first?.message ?? e.message, field: first?.field ?? null };
}

export const sendgridDriver: ProviderDriver = {
  provider: 'sendgrid',
  sdk: `@sendgrid/mail ${version('@sendgrid/mail')}`,
  async send(baseURL, mail, as = {}) {
    const service = sendgridMail(baseURL, as.key === null ? undefined : (as.key ?? 'SG.test-key'));
    try {
      const [response] = await service.send({
        from: mail.from,
        to: [...mail.to],
        cc: mail.cc && [...mail.cc],
        bcc: mail.bcc && [...mail.bcc],
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        headers: mail.header && { [mail.header[0]]: mail.header[1] },
        attachments: mail.attachment && [
          { content: mail.attachment.content.toString('base64'), filename: mail.attachment.filename, type: mail.attachment.contentType },
        ],
      } as Parameters<MailService['send']>[0]);
      return { ok: true, id: String(response.headers['x-message-id']) };
    } catch (error) {
      return sendgridOutcome(error);
    }
  },
};

/**
 * A Postmark server client pointed at `baseURL` as the guide says. With
 * `token: null` the header is taken off on the way out: the SDK refuses to
 * build a client without a token, and the server's own 401 is what is tested,
 * still parsed by the SDK into its error class.
 */
export function postmarkClient(baseURL: string, token: string | null = 'server-token'): ServerClient {
  const withoutToken = (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    headers.delete('x-postmark-server-token');
    return fetch(input, { ...init, headers });
  };
  return new ServerClient(token ?? 'server-token', { useHttps: false, requestHost: new URL(baseURL).host, ...(token === null ? { fetch: withoutToken } : {}) });
}

export const postmarkDriver: ProviderDriver = {
  provider: 'postmark',
  sdk: `postmark ${version('postmark')}`,
  async send(baseURL, mail, as = {}) {
    const client = postmarkClient(baseURL, as.key === undefined ? 'server-token' : as.key);
    try {
      const answer = await client.sendEmail({
        From: mail.from,
        To: mail.to.join(', '),
        Cc: mail.cc?.join(', '),
        Bcc: mail.bcc?.join(', '),
        Subject: mail.subject,
        TextBody: mail.text,
        HtmlBody: mail.html,
        Headers: mail.header && [{ Name: mail.header[0], Value: mail.header[1] }],
        Attachments: mail.attachment && [
          { Name: mail.attachment.filename, Content: mail.attachment.content.toString('base64'), ContentType: mail.attachment.contentType, ContentID: null },
        ],
      });
      return { ok: true, id: answer.MessageID };
    } catch (error) {
      const e = error as { name: string; statusCode?: number; message: string };
      return { ok: false, error: e.name, status: e.statusCode, message: e.message };
    }
  },
};

/** The SDKs' error from an answer the SDK never saw: a raw call with no credentials, named by what the answer says. */
async function unauthenticated(url: string, read: (answer: Response, body: string) => string): Promise<SdkOutcome> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
  const body = await answer.text();
  return { ok: false, error: read(answer, body), status: answer.status, message: body };
}

/**
 * SES v1 through `@aws-sdk/client-ses`: `SendEmail` for a mail of fields
 * alone; one with an attachment or a header (which `SendEmail` cannot
 * carry) as `SendRawEmail`, composed by nodemailer's MailComposer with every
 * recipient in `Destinations`, as nodemailer 6's SES transport sends it.
 */
export const sesV1Driver: ProviderDriver = {
  provider: 'ses',
  sdk: `@aws-sdk/client-ses ${version('@aws-sdk/client-ses')}`,
  async send(baseURL, mail, as = {}) {
    // Without credentials the SDK refuses before sending; the server's own answer to an unsigned call.
    if (as.key === null) return unauthenticated(`${baseURL}/`, (_, body) => /<Code>([^<]*)<\/Code>/.exec(body)?.[1] ?? '');
    const client = new SESClient({
      endpoint: baseURL,
      region: 'us-east-1',
      credentials: { accessKeyId: as.key ?? 'AKIDTEST', secretAccessKey: 'test-secret' },
      maxAttempts: as.sdkRetries ? 3 : 1,
    });
    const recipients = [...mail.to, ...(mail.cc ?? []), ...(mail.bcc ?? [])];
    try {
      if (mail.attachment || mail.header) {
        const source = await new MailComposer({
          from: mail.from,
          to: [...mail.to],
          cc: mail.cc && [...mail.cc],
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          headers: mail.header && { [mail.header[0]]: mail.header[1] },
          attachments: mail.attachment && [mail.attachment],
        })
          .compile()
          .build();
        const answer = await client.send(new SendRawEmailCommand({ Source: mail.from, Destinations: recipients, RawMessage: { Data: source } }));
        return { ok: true, id: answer.MessageId! };
      }
      const answer = await client.send(
        new SendEmailV1Command({
          Source: mail.from,
          Destination: { ToAddresses: [...mail.to], CcAddresses: mail.cc && [...mail.cc], BccAddresses: mail.bcc && [...mail.bcc] },
          Message: {
            Subject: { Data: mail.subject },
            Body: { ...(mail.text === undefined ? {} : { Text: { Data: mail.text } }), ...(mail.html === undefined ? {} : { Html: { Data: mail.html } }) },
          },
        }),
      );
      return { ok: true, id: answer.MessageId! };
    } catch (error) {
      return thrown(error);
    } finally {
      client.destroy();
    }
  },
};

/**
 * Mailgun through `mailgun.js`: every error is its `APIError`, told apart by
 * `status`; the class is minified in the build (`j`), so the outcome names
 * it by the `type` the SDK gives it, `MailgunAPIError`.
 */
export const mailgunDriver: ProviderDriver = {
  provider: 'mailgun',
  sdk: `mailgun.js ${version('mailgun.js')}`,
  async send(baseURL, mail, as = {}) {
    // With no key the SDK refuses before any request (`Parameter "key" is required`); a raw request gets the server's own refusal.
    if (as.key === null) return unauthenticated(`${baseURL}/v3/acme.test/messages`, (_, body) => body.split(':')[0]!);
    const client = new Mailgun(FormData).client({ username: 'api', key: as.key ?? 'key-test', url: baseURL });
    try {
      const answer = await client.messages.create('acme.test', {
        from: mail.from,
        to: [...mail.to],
        ...(mail.cc && { cc: [...mail.cc] }),
        ...(mail.bcc && { bcc: [...mail.bcc] }),
        subject: mail.subject,
        ...(mail.text !== undefined && { text: mail.text }),
        ...(mail.html !== undefined && { html: mail.html }),
        ...(mail.header && { [`h:${mail.header[0]}`]: mail.header[1] }),
        ...(mail.attachment && {
          attachment: [{ filename: mail.attachment.filename, data: mail.attachment.content, contentType: mail.attachment.contentType }],
        }),
      } as Parameters<typeof client.messages.create>[1]);
      return { ok: true, id: answer.id! };
    } catch (error) {
      const e = error as { type?: string };
      return e.type === 'MailgunAPIError' ? { ...(thrown(error) as Extract<SdkOutcome, { ok: false }>), error: e.type } : thrown(error);
    }
  },
};

/**
 * Brevo through `@getbrevo/brevo`'s `BrevoClient`: a 400 is its
 * `BadRequestError`, any other status a `BrevoError` with `statusCode`. Its
 * own retries (twice on 408, 429 and 5xx) are off unless asked.
 */
export const brevoDriver: ProviderDriver = {
  provider: 'brevo',
  sdk: `@getbrevo/brevo ${version('@getbrevo/brevo')}`,
  async send(baseURL, mail, as = {}) {
    // No key at all the SDK refuses before sending; an empty one (an unset variable read as '') it sends, as an app would.
    const client = new BrevoClient({ apiKey: as.key === null ? '' : (as.key ?? 'xkeysib-test'), baseUrl: `${baseURL}/v3`, maxRetries: as.sdkRetries ? 2 : 0 });
    const contacts = (list: readonly string[] | undefined) => list && list.map((email) => ({ email }));
    const [, name, email] = /^(?:(.*?)\s*<)?([^<>]*)>?$/.exec(mail.from)!;
    try {
      const answer = await client.transactionalEmails.sendTransacEmail({
        sender: name ? { name, email } : { email },
        to: contacts(mail.to),
        cc: contacts(mail.cc),
        bcc: contacts(mail.bcc),
        subject: mail.subject,
        textContent: mail.text,
        htmlContent: mail.html,
        headers: mail.header && { [mail.header[0]]: mail.header[1] },
        attachment: mail.attachment && [{ name: mail.attachment.filename, content: mail.attachment.content.toString('base64') }],
      });
      return { ok: true, id: answer.messageId! };
    } catch (error) {
      return thrown(error);
    }
  },
};
