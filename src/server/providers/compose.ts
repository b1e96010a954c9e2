// A provider call's mail as the MIME source the store keeps: composed by
// nodemailer's MailComposer (the composer most Node apps' mail already comes
// from) for a call that gives fields, taken as it is for a raw one; either
// way the provider's stamp goes first (../../contract/providers.ts), so the
// mail says which provider took it wherever it is read.
//
// Only buffers and strings reach the composer: it would also read a file
// path or fetch a URL given as content, and neither is ever what a caller
// of this server may make it do (its file and URL access are switched off too).
import MailComposer from 'nodemailer/lib/mail-composer';
import { PROVIDER_HEADER, stampHeaderValue, type ProviderStamp } from '../../contract/providers.js';
import { formatAddress, type ApiAddress, type ComposedMail } from './api-send.js';

const list = (addresses: readonly ApiAddress[]) => (addresses.length === 0 ? undefined : addresses.map(formatAddress));

/** The stamp's header line, CRLF-terminated. */
export function stampLine(stamp: ProviderStamp): Buffer {
  return Buffer.from(`${PROVIDER_HEADER}: ${stampHeaderValue(stamp)}\r\n`, 'ascii');
}

/** A raw source with the stamp put first; the rest is the app's, byte for byte. */
export function stampRaw(source: Buffer, stamp: ProviderStamp): Buffer {
  return Buffer.concat([stampLine(stamp), source]);
}

/** The composed mail's MIME source, stamped. */
export async function composeMail(mail: ComposedMail, stamp: ProviderStamp, messageId: string): Promise<Buffer> {
  const composer = new MailComposer({
    from: formatAddress(mail.from),
    to: list(mail.to),
    cc: list(mail.cc),
    replyTo: list(mail.replyTo),
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId,
    date: new Date(),
    headers: mail.headers.map(([key, value]) => ({ key, value })),
    attachments: mail.attachments.map((a) => ({
      content: a.content,
      filename: a.filename ?? false,
      contentType: a.contentType,
      cid: a.contentId,
      contentDisposition: a.inline ? 'inline' : 'attachment',
    })),
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const source = await composer.compile().build();
  return stampRaw(source, stamp);
}
