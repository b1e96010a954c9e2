// The one event model every provider format is made from (DESIGN.md, "A
// family of adapters"): what happened to one recipient of one provider send,
// with the id that send was answered with, so the app can match the event
// to the mail it sent. Each provider module (resend.ts, sendgrid.ts, ...)
// turns it into that provider's body and signs it as that provider does;
// the webhook engine delivers it like any other event (retries, dead
// letters, replay, the delivery log), and the provider's own event id is
// made from the engine's, so it is the same on every attempt.
import type { ProviderEventKind, ProviderFormat } from '../../../contract/provider-events.js';
import type { ProviderSendFacts } from '../../base/smtp-attempts.js';

export interface ProviderEvent {
  readonly kind: ProviderEventKind;
  readonly provider: ProviderFormat;
  /** The engine's id (`evt_` and 32 hex digits): the provider's own event id is made from it (`providerEventId`). */
  readonly eventId: string;
  /** The recipient the event is about (its mailbox key). */
  readonly address: string;
  /** When it happened, wall-clock ms. */
  readonly at: number;
  /** When the provider took the send, wall-clock ms. */
  readonly sentAt: number;
  /** The envelope sender of the send. */
  readonly from: string;
  readonly send: ProviderSendFacts;
  /** What the receiving server said: a bounce's diagnostic, a delay's reason, a delivery's `250`. */
  readonly detail: string;
}

/** What a format reads of the webhook it formats for (registration.ts's `Webhook` has it): its id, and its secret. */
export interface FormatWebhook {
  readonly id: string;
  readonly secret: string;
}

/** A provider event as sent: its body, and the headers that do not change between attempts. */
export interface FormattedEvent {
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Where a format's links point (SES: the signing certificate, the subscription's confirm and unsubscribe URLs). */
export interface FormatContext {
  /** The API's base URL, `http://127.0.0.1:8025`. */
  readonly apiUrl: string;
}

/** One provider's events: its body for each kind it sends, its signature, and its secret. */
export interface ProviderFormatter {
  /** The kinds this provider sends an event for (Postmark and SES have no `sent`; SES no delay; Postmark no `dropped`). */
  readonly kinds: readonly ProviderEventKind[];
  /** The body for `event`, one of `kinds`: made at once, where the event is made, so every attempt sends the same bytes. */
  format(event: ProviderEvent, webhook: FormatWebhook, context: FormatContext): FormattedEvent;
  /**
   * The headers that sign one attempt, made where it is sent (the delivery
   * thread), with that attempt's timestamp; absent when the body carries
   * its own signature (Mailgun, SES) or nothing is signed (Postmark).
   */
  sign?(secret: string, eventId: string, timestampSeconds: number, body: string): Readonly<Record<string, string>>;
  /** A secret for a registration that gives none. */
  makeSecret(): string;
  /** Why a given secret cannot sign this format, or undefined when it can. */
  secretProblem(secret: string): string | undefined;
}

/** The provider's own event id, made from the engine's: the same on every attempt and duplicate, so the app deduplicates on it. */
export function providerEventId(eventId: string): string {
  return eventId.replace(/^evt_/, '');
}

/** The hex digits of an event id as a UUID (SNS message ids, Postmark and SES feedback ids). */
export function uuidOf(eventId: string): string {
  const hex = providerEventId(eventId).padEnd(32, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** What a kind says when the test gave no words of its own. */
export const DEFAULT_DETAIL: Readonly<Record<ProviderEventKind, string>> = Object.freeze({
  sent: 'The provider took the message',
  delivered: '250 2.0.0 OK: queued (mailroom)',
  delayed: '421 4.4.1 Connection timed out; the provider will try again (mailroom test event)',
  bounced: '550 5.1.1 The email account that you tried to reach does not exist (mailroom test event)',
  soft_bounced: '452 4.2.2 The email account that you tried to reach is over quota (mailroom test event)',
  complained: 'The recipient marked the message as spam (mailroom test event)',
  // SendGrid's words for the commonest reason (an earlier hard bounce); an earlier complaint is 'Spam Reporting Address' (provider-event-source.ts).
  dropped: 'Bounced Address',
});

/** A `dropped` event's detail when the recipient complained before (SendGrid's reason). */
export const DROPPED_AFTER_COMPLAINT = 'Spam Reporting Address';

/** The enhanced status code in a detail (`5.1.1`), or a default for its class. */
export function statusIn(detail: string, permanent: boolean): string {
  return /\b([245]\.\d{1,3}\.\d{1,3})\b/.exec(detail)?.[1] ?? (permanent ? '5.0.0' : '4.0.0');
}

/** The SMTP reply code in a detail (`550`), or a default for its class. */
export function codeIn(detail: string, permanent: boolean): number {
  const code = /^([245]\d\d)\b/.exec(detail)?.[1];
  return code === undefined ? (permanent ? 550 : 421) : Number(code);
}

/** The domain part of an address. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

/** A message id without its angle brackets (Mailgun's and SES's events name it so). */
export function bare(messageId: string | undefined): string {
  return (messageId ?? '').replace(/^<|>$/g, '');
}
