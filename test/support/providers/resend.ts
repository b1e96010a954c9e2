// Resend's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import { Resend } from 'resend';
import { version, type ProviderDriver } from '../provider-sdks.js';

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
