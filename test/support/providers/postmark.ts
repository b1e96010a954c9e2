// Postmark's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import { ServerClient } from 'postmark';
import { version, type ProviderDriver } from '../provider-sdks.js';

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
