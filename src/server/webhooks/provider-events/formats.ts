// The provider formats side by side, by name: adding a provider's events is
// one module and one row here (and one row of the contract test).
import type { ProviderFormat, WebhookFormat } from '../../../contract/provider-events.js';
import { mailgunFormat } from './mailgun.js';
import { postmarkFormat } from './postmark.js';
import type { ProviderFormatter } from './provider-event.js';
import { resendFormat } from './resend.js';
import { sendgridFormat } from './sendgrid.js';
import { sesFormat } from './ses.js';

export const PROVIDER_FORMATS: Readonly<Record<ProviderFormat, ProviderFormatter>> = Object.freeze({
  resend: resendFormat,
  sendgrid: sendgridFormat,
  mailgun: mailgunFormat,
  postmark: postmarkFormat,
  ses: sesFormat,
});

/** A provider's format, or undefined for mailroom's own. */
export function providerFormatOf(format: WebhookFormat | undefined): ProviderFormatter | undefined {
  return format === undefined || format === 'mailroom' ? undefined : PROVIDER_FORMATS[format];
}

/**
 * The headers that sign one attempt of a provider-format webhook (in the
 * delivery thread, with the attempt's timestamp); empty for a format whose
 * body carries its signature.
 */
export function providerSignature(
  format: ProviderFormat,
  secret: string,
  eventId: string,
  timestampSeconds: number,
  body: string,
): Readonly<Record<string, string>> {
  return PROVIDER_FORMATS[format].sign?.(secret, eventId, timestampSeconds, body) ?? {};
}
