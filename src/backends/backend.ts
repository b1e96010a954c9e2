// The boundary between the inbox and a mail catcher: what a backend must
// answer for the nine rules, the failure text and the matchers to work the
// same on every one (docs/backends.md).
//
// A backend answers, for one address: its mail, newest first (rule 7 walks
// it down to the watermark); one message and its raw source (rule 8); the
// deletion of one message, and of the mail that is this address's alone.
// What it offers beyond that is advertised through `features()`: a push or
// server-side wait (`wait`), paging, the SMTP deferral lab, webhooks. What it
// cannot do it refuses at once with the slug `unsupported`, naming itself
// and what to use instead (unsupported.ts) - never a fake.
//
// The embedded server's client (client/client.ts, `MailroomClient`) is one
// backend as it is; maildev.ts and mailpit.ts are the catchers a team may
// already run. The inbox and the wait loop see only this interface.
import type { CallOptions, ListOptions, MailboxIndexOptions, MailboxListing, WaitForMailOptions, WaitListing } from '../client/client.js';
import type { MailboxIndex, MessageDetail, ServiceFeatures } from '../client/messages.js';
import type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
import type { WebhookDeadLetter, WebhookDelivery, WebhookRegistration } from '../client/webhooks.js';
import type { WireSmtpRuleInput } from '../contract/wire.js';
import type { WireWebhookInput } from '../contract/webhook-wire.js';
import type { WireProviderEventReport, WireProviderEventReported } from '../contract/provider-events.js';

/** The backends a user can choose (`backend` option, `MAILROOM_BACKEND`). */
export type BackendName = 'mailroom' | 'maildev' | 'mailpit';

export const BACKEND_NAMES: readonly BackendName[] = Object.freeze(['mailroom', 'maildev', 'mailpit']);

/** The catcher's web address when none is given: where each one listens by default. */
export const DEFAULT_BACKEND_URLS: Readonly<Record<Exclude<BackendName, 'mailroom'>, string>> = Object.freeze({
  maildev: 'http://127.0.0.1:1080',
  mailpit: 'http://127.0.0.1:8025',
});

/**
 * How a backend's ids relate to arrival. `'arrival'`: ids sort by arrival,
 * so one id is a watermark (the embedded server). `'random'`: ids say
 * nothing about order, so the watermark is the set of ids present at setup,
 * remembered (maildev, Mailpit).
 */
export type IdOrder = 'arrival' | 'random';

export interface MailBackend {
  /** Which backend this is: named in every `unsupported` refusal and in docs. */
  readonly backend: BackendName;
  /** The backend's web address, normalised (no trailing slash). */
  readonly apiURL: string;
  /** The default timeout of one request, in ms. */
  readonly requestTimeout: number;
  readonly idOrder: IdOrder;

  /** The address's newest mail (at most `limit`), newest first, matched exactly on the address (case-insensitively). */
  listMessages(address: string, options?: ListOptions): Promise<MailboxListing>;
  /** Every id of the address's mail now, newest first: the watermark of a random-id backend (`idOrder: 'random'`). */
  presentIds?(address: string, options?: CallOptions): Promise<readonly string[]>;
  /** One message of the address; `404 not_found` when it is gone or is not the address's. */
  getMessage(address: string, id: string, options?: CallOptions): Promise<MessageDetail>;
  getRawMessage(address: string, id: string, options?: CallOptions): Promise<string>;
  /** Idempotent: false when it was already gone. */
  deleteMessage(address: string, id: string, options?: CallOptions): Promise<boolean>;
  /**
   * Deletes the address's mail - on a shared catcher only the mail that is
   * this address's alone: a mail that also went to another address survives.
   * Idempotent; how many went.
   */
  deleteMailbox(address: string, options?: CallOptions): Promise<number>;
  /** `true` when the backend says it is up. */
  health(options?: CallOptions): Promise<boolean>;
  /** What the backend offers beyond the calls above; asked once and remembered. */
  features(options?: CallOptions): Promise<ServiceFeatures>;
  /**
   * A wait held by the backend (the embedded server's long-poll) or driven
   * by its push stream: answers once mail newer than `sinceId` is listed, or
   * `holdMs` passed. Offered when `features().wait` is set.
   */
  waitForMail(address: string, options: WaitForMailOptions): Promise<WaitListing>;

  // The embedded server's extensions; other backends refuse them with `unsupported`.
  smtpRules(address: string, options?: CallOptions): Promise<SmtpRule[]>;
  addSmtpRule(address: string, rule: WireSmtpRuleInput, options?: CallOptions): Promise<{ rule: SmtpRule; rules: SmtpRule[] }>;
  clearSmtpRules(address: string, options?: CallOptions): Promise<number>;
  smtpAttempts(address: string, options?: CallOptions): Promise<SmtpAttempt[]>;
  addWebhook(input: WireWebhookInput, options?: CallOptions): Promise<WebhookRegistration>;
  webhooks(address?: string, options?: CallOptions): Promise<WebhookRegistration[]>;
  removeWebhook(id: string, options?: CallOptions): Promise<boolean>;
  webhookDeliveries(id: string, options?: CallOptions): Promise<WebhookDelivery[]>;
  webhookDeadLetters(id: string, options?: CallOptions): Promise<WebhookDeadLetter[]>;
  replayDeadLetter(id: string, eventId: string, options?: CallOptions): Promise<WebhookDelivery>;
  /**
   * A provider event for an address (`POST /api/v1/provider-events`): the
   * last provider send to it bounced, complained, ... Optional, so a backend
   * written before it still compiles: one without it is `unsupported`.
   */
  reportProviderEvent?(report: WireProviderEventReport, options?: CallOptions): Promise<WireProviderEventReported>;
  /**
   * The mailboxes holding mail, the latest to get some first (the embedded
   * server's index, `features.mailboxes`); a catcher has none. A failed
   * wait reads it to say what was taken for other addresses meanwhile.
   */
  mailboxes?(options?: MailboxIndexOptions): Promise<MailboxIndex>;
  /** Closes what the backend holds open (a push stream); the backend reopens it when asked again. */
  close?(): Promise<void>;
}

const REQUIRED = ['listMessages', 'getMessage', 'getRawMessage', 'deleteMessage', 'deleteMailbox', 'health', 'features', 'waitForMail'] as const;

/** True for an object that answers the calls a backend must (a `MailroomClient`, a driver). */
export function isMailBackend(value: unknown): value is MailBackend {
  if (value === null || typeof value !== 'object') return false;
  const o = value as Record<string, unknown>;
  return typeof o.backend === 'string' && typeof o.apiURL === 'string' && REQUIRED.every((name) => typeof o[name] === 'function');
}
