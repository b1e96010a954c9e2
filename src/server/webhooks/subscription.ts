// A webhook whose events wait for its subscription to be confirmed: an SES
// one, as SNS delivers to an HTTP(S) subscription (provider-events/ses.ts).
// SNS posts the `SubscriptionConfirmation` first and posts `Notification`s
// only once the app fetched its `SubscribeURL`: an app that never confirms
// never hears a bounce. Here the notifications are queued meanwhile (in the
// delivery log as pending, `held`, never attempted, so never retried or
// dead-lettered for it, and bounded by the webhook's log like any pending
// event) and go, in order, once the confirm URL is fetched. SNS itself
// drops what it cannot deliver to an unconfirmed subscription; holding is
// kinder to a test that confirms a moment late, and the log says why they wait.
//
// Both dispatchers ask this one rule (dispatcher.ts; the shared store's
// Lua script, webhook.lua's `enqueue`, says the same of a registration's
// `format`), and the confirmation is kept by the store, so on a shared store
// a confirmation fetched through any server releases them for all.
import type { WebhookEventType } from '../../contract/webhooks.js';
import type { Webhook } from './registration.js';

/** Whether `webhook` is a subscription the app confirms before it is sent notifications. */
export function hasSubscription(webhook: Pick<Webhook, 'format'>): boolean {
  return webhook.format === 'ses';
}

/** Whether an event of `type` to `webhook` waits for its subscription to be confirmed (everything but the confirmation request itself). */
export function waitsForConfirmation(webhook: Pick<Webhook, 'format'>, type: WebhookEventType): boolean {
  return hasSubscription(webhook) && type !== 'provider.subscription';
}

/** Why a webhook's notifications wait, naming it: the server's log and the errors a test sees. */
export function unconfirmedText(webhook: Pick<Webhook, 'id' | 'url'>): string {
  return (
    `the SNS subscription of webhook ${webhook.id} (${webhook.url}) is unconfirmed: its notifications are held until the app ` +
    'fetches the SubscribeURL of the SubscriptionConfirmation it was sent first (GET /api/v1/provider-events/ses/confirm?...)'
  );
}
