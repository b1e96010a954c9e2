// Provider delivery events (docs/CONTRACT.md, "Provider events", an
// embedded-server extension): a webhook registered with a provider's
// `format` is sent what that provider sends an app that listens to it -
// Resend's, SendGrid's, Mailgun's, Postmark's or SES's (through SNS)
// delivery events, signed as that provider signs them - about the mail sent
// through that provider's API here. Both halves read this: the formats, the
// event kinds of the one event model, and the report a test makes for its
// address ("this address bounced").
import type { ProviderName } from './providers.js';

/** How a webhook's events are shaped and signed: mailroom's own, or one provider's. */
export type WebhookFormat = 'mailroom' | 'resend' | 'sendgrid' | 'mailgun' | 'postmark' | 'ses';
export const WEBHOOK_FORMATS: readonly WebhookFormat[] = Object.freeze(['mailroom', 'resend', 'sendgrid', 'mailgun', 'postmark', 'ses']);

/** A provider's format, named as its send API is. */
export type ProviderFormat = Exclude<WebhookFormat, 'mailroom'> & ProviderName;

/**
 * The event model every provider format is made from. `sent`: the provider
 * took the send (Resend `email.sent`, SendGrid `processed`, Mailgun
 * `accepted`); `delivered`: the recipient's server took it; `delayed`: a
 * temporary failure, still trying; `bounced`: a permanent failure (hard
 * bounce); `soft_bounced`: a temporary one reported as a bounce;
 * `complained`: the recipient marked it as spam; `dropped`: the provider
 * would not send to the recipient, on its suppression list (it hard-bounced
 * or complained before): SendGrid `dropped`, Resend `email.suppressed`,
 * Mailgun `failed` with a `suppress-*` reason, SES a `Permanent` bounce
 * `OnAccountSuppressionList` (Postmark refuses such a send on its API instead).
 */
export type ProviderEventKind = 'sent' | 'delivered' | 'delayed' | 'bounced' | 'soft_bounced' | 'complained' | 'dropped';
export const PROVIDER_EVENT_KINDS: readonly ProviderEventKind[] = Object.freeze([
  'sent',
  'delivered',
  'delayed',
  'bounced',
  'soft_bounced',
  'complained',
  'dropped',
]);

/**
 * The webhook event type a provider event is logged and filtered by
 * (`events` of a provider-format registration); `provider.subscription`
 * is SNS's `SubscriptionConfirmation`, sent first to every `ses` webhook
 * whatever its `events`.
 */
export type ProviderEventType = `provider.${ProviderEventKind}` | 'provider.subscription';
export const PROVIDER_EVENT_TYPES: readonly ProviderEventType[] = Object.freeze(PROVIDER_EVENT_KINDS.map((kind) => `provider.${kind}` as const));

/** What a test may report for its address: what happened after the provider took the mail. */
export type ReportedProviderEvent = Exclude<ProviderEventKind, 'sent'>;
export const REPORTABLE_PROVIDER_EVENTS: readonly ReportedProviderEvent[] = Object.freeze(
  PROVIDER_EVENT_KINDS.filter((kind): kind is ReportedProviderEvent => kind !== 'sent'),
);

/** `POST /api/v1/provider-events`: the last provider send to `address` had this fate. */
export interface WireProviderEventReport {
  readonly address: string;
  readonly event: ReportedProviderEvent;
  /** The words the event carries (a bounce's diagnostic); a default per kind otherwise. */
  readonly detail?: string;
}

/** The answer: which send the event is about, and how many webhooks were sent it. */
export interface WireProviderEventReported {
  readonly address: string;
  readonly event: ReportedProviderEvent;
  readonly provider: ProviderName;
  /** The id the provider's send call answered with (Resend `id`, SendGrid `X-Message-Id`, ...). */
  readonly provider_message_id: string;
  readonly webhooks: number;
}
