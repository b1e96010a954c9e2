// Mailgun's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import Mailgun from 'mailgun.js';
import { thrown, unauthenticated, version, type ProviderDriver, type SdkOutcome } from '../provider-sdks.js';

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
