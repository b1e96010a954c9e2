// SendGrid's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import sgMail from '@sendgrid/mail';
import { version, type ProviderDriver, type SdkOutcome } from '../provider-sdks.js';

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
