// Where provider events come from: the provider API intake's attempts (on
// the same feed as SMTP's) and a test's report for its address.
//
// - a send the provider API took and stored: `sent`, then `delivered`,
//   for each recipient, carrying the id the send call answered with; or,
//   to a recipient reported hard-bounced or complained for that provider
//   before, `dropped` (the provider's suppression list). The mail
//   is stored all the same: a test still sees an app that goes on mailing
//   an address it was told bounced (`expect(inbox).not.toReceiveMail()`
//   fails), where the provider would have kept it back;
// - a recipient the lab refused for good (a `reject` rule): `bounced`;
// - a test's report (`POST /api/v1/provider-events`, "this address
//   bounced / complained / was delayed"): that event, about the last
//   provider send to the address (send-log.ts: on a shared store, whichever
//   server took it).
//
// Each event goes to the webhooks of that provider's format that hear its
// type at that address, one event per webhook (a Mailgun body carries the
// webhook's own signature), and is delivered by the engine like any other.
import type { ProviderEventKind, ProviderFormat, ReportedProviderEvent } from '../../../contract/provider-events.js';
import type { ProviderName } from '../../../contract/providers.js';
import type { WebhookEventType } from '../../../contract/webhooks.js';
import { whenReady } from '../../base/awaitable.js';
import type { Logger } from '../../base/log.js';
import type { AttemptFeed, SmtpAttempt } from '../../base/smtp-attempts.js';
import { eventId, eventOf, payloadOf, type EventRecord, type WebhookEvent } from '../events.js';
import type { Webhook } from '../registration.js';
import { PROVIDER_FORMATS } from './formats.js';
import { DEFAULT_DETAIL, DROPPED_AFTER_COMPLAINT, type FormattedEvent, type ProviderEvent } from './provider-event.js';
import type { LastSend, ProviderSendLog } from './send-log.js';
import { subscriptionConfirmation } from './ses.js';

export interface ProviderEventSourceOptions {
  readonly attempts: AttemptFeed;
  /** The webhooks that hear `type` at `address` (every format: the source keeps its provider's). */
  readonly subscribers: (type: WebhookEventType, address: string) => readonly Webhook[];
  /** Queues an event for webhooks (the engine's fan-out). */
  readonly fanOut: (subscribers: readonly Webhook[], event: WebhookEvent) => void;
  /** The last sends and the suppressions (send-log.ts): this server's memory, or the shared store. */
  readonly log: ProviderSendLog;
  readonly now: () => number;
  /** The API's base URL, for SES's links. */
  readonly apiUrl: () => string;
  readonly logger: Logger;
}

/** What a report was about: the send, and how many webhooks were sent the event. */
export interface Reported {
  readonly provider: ProviderName;
  readonly providerMessageId: string;
  readonly webhooks: number;
}

const isFormat = (provider: ProviderName | undefined): provider is ProviderFormat => provider !== undefined && provider in PROVIDER_FORMATS;

/** An event made for one webhook: its body is made here, once, so every attempt and duplicate sends the same bytes. */
function webhookEvent(id: string, type: WebhookEventType, address: string, createdAt: number, formatted: FormattedEvent): WebhookEvent {
  const record: EventRecord = {
    id,
    type,
    address,
    createdAt,
    ref: { kind: 'json', body: formatted.body, ...(formatted.headers ? { headers: formatted.headers } : {}) },
  };
  return eventOf(record, () => Promise.resolve(payloadOf(record, undefined)));
}

export class ProviderEventSource {
  readonly #o: ProviderEventSourceOptions;
  readonly #unsubscribe: () => void;

  constructor(options: ProviderEventSourceOptions) {
    this.#o = options;
    this.#unsubscribe = options.attempts.subscribe((attempt) => this.#heard(attempt));
  }

  #heard(attempt: SmtpAttempt): void {
    const { provider, providerSend: send } = attempt;
    if (attempt.stage !== 'api' || !send || !isFormat(provider)) return;
    const sent: LastSend = { provider, from: attempt.from, send, at: attempt.at };
    const lost = (error: unknown) =>
      this.#o.logger.error(`mailroom: the provider events of a ${provider} send to ${attempt.to} were not made (the store: ${String(error)})`);
    if (attempt.outcome === 'accepted') {
      whenReady(
        this.#o.log.sent(attempt.to, sent),
        (suppressed) => {
          if (suppressed !== undefined) return void this.#emit('dropped', sent, attempt.to, suppressed);
          this.#emit('sent', sent, attempt.to, DEFAULT_DETAIL.sent);
          this.#emit('delivered', sent, attempt.to, DEFAULT_DETAIL.delivered);
        },
        lost,
      );
    } else if (attempt.outcome === 'rejected' && attempt.rule === 'reject') {
      // The lab refused the recipient for good: the provider reports it bounced, and suppresses the address.
      this.#emit('bounced', sent, attempt.to, attempt.text || DEFAULT_DETAIL.bounced);
      whenReady(this.#o.log.suppress(provider, attempt.to, DEFAULT_DETAIL.dropped), () => {}, lost);
    }
  }

  /** Sends `kind` about `send` to every webhook of its provider's format that hears it at `address`; how many. */
  #emit(kind: ProviderEventKind, sent: LastSend, address: string, detail: string): number {
    const formatter = PROVIDER_FORMATS[sent.provider];
    if (!formatter.kinds.includes(kind)) return 0;
    const type: WebhookEventType = `provider.${kind}`;
    const subscribers = this.#o.subscribers(type, address).filter((webhook) => webhook.format === sent.provider);
    const at = this.#o.now();
    for (const webhook of subscribers) {
      const id = eventId();
      const event: ProviderEvent = { kind, provider: sent.provider, eventId: id, address, at, sentAt: sent.at, from: sent.from, send: sent.send, detail };
      this.#o.fanOut([webhook], webhookEvent(id, type, address, at, formatter.format(event, webhook, { apiUrl: this.#o.apiUrl() })));
    }
    return subscribers.length;
  }

  /**
   * A test's report for `address` (its mailbox key): about the last provider
   * send to it, or undefined when there was none. A hard bounce or a
   * complaint also puts the address on that provider's suppression list:
   * its next send through that provider is `dropped`.
   */
  async report(address: string, kind: ReportedProviderEvent, detail: string | undefined): Promise<Reported | undefined> {
    const last = await this.#o.log.last(address);
    if (!last) return undefined;
    const webhooks = this.#emit(kind, last, address, detail ?? DEFAULT_DETAIL[kind]);
    if (kind === 'bounced' || kind === 'complained') {
      await this.#o.log.suppress(last.provider, address, kind === 'bounced' ? DEFAULT_DETAIL.dropped : DROPPED_AFTER_COMPLAINT);
    }
    return { provider: last.provider, providerMessageId: last.send.id, webhooks };
  }

  /** A webhook registered: an `ses` one is sent SNS's `SubscriptionConfirmation` first. */
  registered(webhook: Webhook): void {
    if (webhook.format !== 'ses') return;
    const id = eventId();
    const at = this.#o.now();
    this.#o.fanOut([webhook], webhookEvent(id, 'provider.subscription', '', at, subscriptionConfirmation(webhook, id, at, { apiUrl: this.#o.apiUrl() })));
  }

  close(): void {
    this.#unsubscribe();
  }
}
