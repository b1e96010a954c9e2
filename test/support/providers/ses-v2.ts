// Amazon SES v2's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { thrown, version, type ProviderDriver } from '../provider-sdks.js';

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
