// Brevo's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import { BrevoClient } from '@getbrevo/brevo';
import { thrown, version, type ProviderDriver } from '../provider-sdks.js';

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
