// Amazon SES v1's SDK as a driver of the provider contract suite (../provider-sdks.ts).
import { SESClient, SendEmailCommand as SendEmailV1Command, SendRawEmailCommand } from '@aws-sdk/client-ses';
import MailComposer from 'nodemailer/lib/mail-composer';
import { thrown, unauthenticated, version, type ProviderDriver } from '../provider-sdks.js';

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
