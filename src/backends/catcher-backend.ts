// What the catchers (maildev.ts, mailpit.ts) share: the HTTP calls, the
// push stream and the wait held on it, the features they advertise, and the
// refusal of the embedded server's extensions (unsupported.ts). Each driver
// adds only what its API says: where the mail is, how it reads, how it goes.
import type { CallOptions, ListOptions, MailboxListing, WaitForMailOptions, WaitListing } from '../client/client.js';
import type { MessageDetail, ServiceFeatures } from '../client/messages.js';
import type { SmtpAttempt, SmtpRule } from '../client/smtp-lab.js';
import type { WebhookDeadLetter, WebhookDelivery, WebhookRegistration } from '../client/webhooks.js';
import type { WireWebhookInput } from '../contract/webhook-wire.js';
import type { WireProviderEventReport, WireProviderEventReported } from '../contract/provider-events.js';
import type { BackendName, MailBackend } from './backend.js';
import { CatcherHttp, type BasicCredentials } from './catcher-http.js';
import { PushFeed, type FeedProtocol } from './push-feed.js';
import { holdOnFeed } from './push-wait.js';
import { unsupported } from './unsupported.js';

export interface CatcherOptions {
  /** The catcher's web address, normalised, without credentials. */
  readonly apiURL: string;
  readonly credentials: BasicCredentials | undefined;
  readonly requestTimeout: number;
}

export abstract class CatcherBackend implements MailBackend {
  abstract readonly backend: Exclude<BackendName, 'mailroom'>;
  readonly idOrder = 'random' as const;
  readonly apiURL: string;
  readonly requestTimeout: number;
  protected readonly http: CatcherHttp;
  readonly #feed: PushFeed;
  readonly #features: ServiceFeatures;

  protected constructor(options: CatcherOptions, stream: { readonly path: string; readonly protocol: FeedProtocol }) {
    this.apiURL = options.apiURL;
    this.requestTimeout = options.requestTimeout;
    this.http = new CatcherHttp({ baseURL: options.apiURL, credentials: options.credentials, requestTimeout: options.requestTimeout });
    this.#feed = new PushFeed(`${options.apiURL.replace(/^http/, 'ws')}${stream.path}`, () => this.http.headers(), stream.protocol);
    // A catcher takes mail for any domain; it neither pages for us nor offers the extensions.
    this.#features = Object.freeze({
      wait: stream.path,
      domains: undefined,
      paging: false,
      smtpRules: undefined,
      smtpAttempts: undefined,
      webhooks: undefined,
      mailboxes: undefined,
    });
  }

  abstract listMessages(address: string, options?: ListOptions): Promise<MailboxListing>;
  abstract presentIds(address: string, options?: CallOptions): Promise<readonly string[]>;
  abstract getMessage(address: string, id: string, options?: CallOptions): Promise<MessageDetail>;
  abstract getRawMessage(address: string, id: string, options?: CallOptions): Promise<string>;
  abstract deleteMessage(address: string, id: string, options?: CallOptions): Promise<boolean>;
  abstract deleteMailbox(address: string, options?: CallOptions): Promise<number>;
  abstract health(options?: CallOptions): Promise<boolean>;

  features(): Promise<ServiceFeatures> {
    return Promise.resolve(this.#features);
  }

  /** A wait held on the push stream (push-wait.ts); a network error when the stream is down, and the wait loop polls. */
  waitForMail(address: string, options: WaitForMailOptions): Promise<WaitListing> {
    const list = (timeout: number, signal: AbortSignal | undefined) => this.listMessages(address, { limit: options.limit, timeout, signal });
    return holdOnFeed(this.#feed, list, options, this.requestTimeout);
  }

  async close(): Promise<void> {
    this.#feed.close();
  }

  smtpRules(address: string): Promise<SmtpRule[]> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'smtp-lab', address));
  }
  addSmtpRule(address: string): Promise<{ rule: SmtpRule; rules: SmtpRule[] }> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'smtp-lab', address));
  }
  clearSmtpRules(address: string): Promise<number> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'smtp-lab', address));
  }
  smtpAttempts(address: string): Promise<SmtpAttempt[]> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'smtp-lab', address));
  }
  addWebhook(input: WireWebhookInput): Promise<WebhookRegistration> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks', input.address ?? undefined));
  }
  webhooks(address?: string): Promise<WebhookRegistration[]> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks', address));
  }
  removeWebhook(): Promise<boolean> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks'));
  }
  webhookDeliveries(): Promise<WebhookDelivery[]> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks'));
  }
  webhookDeadLetters(): Promise<WebhookDeadLetter[]> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks'));
  }
  reportProviderEvent(report: WireProviderEventReport): Promise<WireProviderEventReported> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks', report.address));
  }

  replayDeadLetter(): Promise<WebhookDelivery> {
    return Promise.reject(unsupported(this.backend, this.apiURL, 'webhooks'));
  }
}
