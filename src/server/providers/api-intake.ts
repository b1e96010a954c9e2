// The intake of the provider APIs: what SMTP intake is for a mail that came
// over SMTP, for a mail that came through a provider's send call. One send
// (api-send.ts) at a time: its recipients checked as SMTP checks them (a
// well-formed address, the recipient cap, the served domains unless the
// server catches all), the deferral lab asked as at RCPT TO and at the end
// of DATA (a slow rule holds the answer, a rule's refusal becomes the
// provider's error), the mail composed and stored for every recipient, and
// every recipient's attempt published on the same feed as SMTP's, so waits,
// the web UI, webhooks, Redis replicas and the attempt log see it as they
// see an SMTP mail.
//
// A send is taken in steps: `prepare` checks and asks the lab, `compose`
// makes its source, `store` keeps it, `log` publishes the attempts once the dialect has
// worded the answer (its status and text are what the attempt log records).
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseMailboxAddress } from '../../contract/address.js';
import type { ProviderName } from '../../contract/providers.js';
import type { SmtpRuleKind, SmtpRuleStage } from '../../contract/smtp-lab.js';
import type { Logger } from '../base/log.js';
import type { AttemptFeed, AttemptOutcome, SmtpAttempt } from '../base/smtp-attempts.js';
import type { StoredMessage } from '../base/stored-message.js';
import type { LabStore } from '../rules/lab-store.js';
import type { RuleDecision } from '../rules/rule-book.js';
import { mailIdentity } from '../store/mail-identity.js';
import type { MailStore } from '../store/mail-store.js';
import type { ApiFailure, ApiSend } from './api-send.js';
import { composeMail, stampRaw } from './compose.js';

export interface ApiIntakeOptions {
  readonly store: MailStore;
  readonly attempts: AttemptFeed;
  /** The deferral lab, when the rules are on. */
  readonly lab: LabStore | undefined;
  readonly domains: readonly string[];
  /** Take mail for any domain (true), or only for the served ones, as SMTP does. */
  readonly catchAll: boolean;
  readonly maxMessageBytes: number;
  readonly maxRecipients: number;
  /** Wall-clock ms, for the attempts' times. */
  readonly now: () => number;
  readonly logger: Logger;
}

/** Who made the call: what the attempt log says of it. */
export interface ApiCaller {
  readonly provider: ProviderName;
  readonly clientIp: string;
  readonly userAgent: string | undefined;
  /** When the request arrived (the attempt's `beganAt`: a retry begins after the answer it retries). */
  readonly beganAt: number;
}

/** What became of one send. */
export type SendOutcome =
  /** Prepared, nothing refused it: `compose` makes its source. */
  | { readonly kind: 'ready' }
  /** Composed, within the size limit: `store` keeps it. */
  | { readonly kind: 'composed'; readonly source: Buffer }
  | { readonly kind: 'accepted'; readonly stored: readonly StoredMessage[] }
  | { readonly kind: 'failed'; readonly failure: ApiFailure; readonly rule?: SmtpRuleKind | undefined }
  /** A disconnect rule: the call is answered by closing the connection. */
  | { readonly kind: 'dropped'; readonly text: string; readonly rule: SmtpRuleKind };

/** A send as taken: its outcome, and what its attempts say of it. */
export interface TakenSend {
  readonly send: ApiSend;
  readonly outcome: SendOutcome;
  /** The recipients' mailbox keys, in the call's order; empty when the call named none that could be read. */
  readonly recipients: readonly string[];
  readonly from: string;
  readonly messageId: string | undefined;
  readonly subject: string | undefined;
}

/** `prepare` is cut short: the caller hung up while a slow rule held the answer. */
export const HUNG_UP = 'The client closed the connection while the answer was held';

export class ApiIntake {
  readonly #o: ApiIntakeOptions;
  readonly #served: ReadonlySet<string>;

  constructor(options: ApiIntakeOptions) {
    this.#o = options;
    this.#served = new Set(options.domains);
  }

  /**
   * Everything but storing: the recipients checked and the lab asked (a
   * slow rule holds this). Its outcome is `ready` when nothing refused the
   * send; `compose` then makes its source and `store` keeps it. A call with
   * several mails takes each step for all of them before the next, so a
   * refusal of one can refuse the call before any is stored.
   */
  async prepare(send: ApiSend, caller: ApiCaller, signal: AbortSignal): Promise<TakenSend> {
    const { mail } = send;
    const from = mail.kind === 'composed' ? mail.from.address : (mail.from ?? '');
    const named = mail.kind === 'composed' ? [...mail.to, ...mail.cc, ...mail.bcc].map((a) => a.address) : mail.recipients;
    const identity = mail.kind === 'raw' ? mailIdentity(mail.source) : { messageId: undefined, subject: mail.subject };
    const messageId = mail.kind === 'composed' ? `<${randomUUID()}@${caller.provider}.mailroom>` : identity.messageId;
    const taken = (outcome: SendOutcome, recipients: readonly string[]): TakenSend => ({
      send,
      outcome,
      recipients,
      from,
      messageId,
      subject: identity.subject,
    });
    const checked = this.#recipients(named);
    if ('kind' in checked) {
      const readable = named.map((a) => a.toLowerCase()).filter((a) => parseMailboxAddress(a) !== undefined);
      return taken({ kind: 'failed', failure: checked }, readable);
    }
    const decision = await this.#decide(checked.keys, { clientIp: caller.clientIp, from }, signal);
    return taken(decision ?? { kind: 'ready' }, checked.keys);
  }

  /** Composes a prepared send that nothing refused; one over `maxMessageBytes` fails here, before anything of its call is stored. */
  async compose(prepared: TakenSend): Promise<TakenSend> {
    if (prepared.outcome.kind !== 'ready') return prepared;
    const { send } = prepared;
    const source = send.mail.kind === 'composed' ? await composeMail(send.mail, send.stamp, prepared.messageId!) : stampRaw(send.mail.source, send.stamp);
    if (source.length <= this.#o.maxMessageBytes) return { ...prepared, outcome: { kind: 'composed', source } };
    const detail = `The message is ${source.length} bytes, over this server's limit of ${this.#o.maxMessageBytes} (maxMessageBytes)`;
    return { ...prepared, outcome: { kind: 'failed', failure: { kind: 'too_large', detail } } };
  }

  /** Stores a composed send for each of its recipients. */
  async store(composed: TakenSend): Promise<TakenSend> {
    if (composed.outcome.kind !== 'composed') return composed;
    const { send, recipients, from } = composed;
    try {
      const stored = await this.#o.store.deliver(recipients, composed.outcome.source, from);
      return { ...composed, outcome: { kind: 'accepted', stored } };
    } catch (error) {
      this.#o.logger.error(`mailroom: could not store a ${send.stamp.name} API message for ${recipients.join(', ')}: ${String(error)}`);
      return { ...composed, outcome: { kind: 'failed', failure: { kind: 'unavailable', status: 503, detail: 'Could not store the message, try again' } } };
    }
  }

  /**
   * Publishes one attempt per recipient of a taken send, answered `status`
   * with `text` (an HTTP status; undefined: the connection was dropped).
   */
  log(taken: TakenSend, caller: ApiCaller, status: number | undefined, text: string): void {
    const at = this.#o.now();
    const { outcome } = taken;
    const failure = outcome.kind === 'failed' ? outcome.failure : undefined;
    // What failed says whether to try again (SES v1 answers a rate limit with 400); the status only where nothing failed.
    const result: AttemptOutcome =
      status === undefined
        ? 'dropped'
        : failure
          ? failure.kind === 'rate_limited' || failure.kind === 'unavailable'
            ? 'deferred'
            : 'rejected'
          : httpOutcome(status);
    const stored = outcome.kind === 'accepted' ? new Map(outcome.stored.map((m) => [m.mailbox, m])) : undefined;
    const { stamp } = taken.send;
    const send = { id: stamp.id, subject: taken.subject, messageId: taken.messageId, tags: stamp.tags, metadata: stamp.metadata };
    for (const to of taken.recipients) {
      const message = stored?.get(to);
      const attempt: SmtpAttempt = {
        at,
        clientIp: caller.clientIp,
        from: taken.from,
        to,
        stage: 'api',
        code: status,
        enhancedCode: undefined,
        text,
        outcome: result,
        messageId: message?.id,
        beganAt: caller.beganAt,
        rule: outcome.kind === 'failed' || outcome.kind === 'dropped' ? outcome.rule : undefined,
        headerMessageId: message ? undefined : taken.messageId,
        headerSubject: message ? undefined : taken.subject,
        provider: caller.provider,
        userAgent: caller.userAgent,
        retryAfterMs: failure?.kind === 'rate_limited' ? failure.retryAfterMs : undefined,
        providerSend: send,
      };
      this.#o.attempts.publish(attempt, message);
    }
  }

  /** Resolves once every attempt logged so far can be read through any server (at once in memory). */
  async flushed(): Promise<void> {
    await this.#o.lab?.flushed()?.catch((error: unknown) => this.#o.logger.error(`mailroom: could not write the attempt log: ${String(error)}`));
  }

  /** The recipients' mailbox keys, or the failure naming the first that cannot be taken. */
  #recipients(named: readonly string[]): { readonly keys: readonly string[] } | ApiFailure {
    if (named.length === 0) return { kind: 'invalid', detail: 'The message has no recipient' };
    const keys: string[] = [];
    for (const address of named) {
      const parsed = parseMailboxAddress(address);
      if (!parsed) return { kind: 'invalid', detail: `Invalid recipient address ${JSON.stringify(address)}` };
      if (!this.#o.catchAll && !this.#served.has(parsed.domain)) {
        return { kind: 'domain', detail: `The domain ${parsed.domain} of ${address} is not served here (served: ${this.#o.domains.join(', ')})` };
      }
      if (!keys.includes(parsed.key)) keys.push(parsed.key);
    }
    if (keys.length > this.#o.maxRecipients) {
      return { kind: 'too_many_recipients', detail: `The message has ${keys.length} recipients, over this server's limit of ${this.#o.maxRecipients}` };
    }
    return { keys };
  }

  /** The lab's say, as at RCPT TO and then at the end of DATA; undefined when no rule refuses. */
  async #decide(recipients: readonly string[], sender: { clientIp: string; from: string }, signal: AbortSignal): Promise<SendOutcome | undefined> {
    const { lab } = this.#o;
    if (!lab) return undefined;
    for (const stage of ['rcpt', 'data'] as const satisfies readonly SmtpRuleStage[]) {
      let decision: RuleDecision | undefined;
      try {
        const step = await lab.step(stage, recipients, sender);
        if (!step) continue;
        decision = step.decision;
        if (step.holdMs > 0) {
          await sleep(step.holdMs, undefined, { signal });
          decision = await lab.decide(stage, recipients, sender);
        }
      } catch (error) {
        if (signal.aborted) return { kind: 'dropped', text: HUNG_UP, rule: 'slow' };
        this.#o.logger.error(`mailroom: could not read the test rules for ${recipients.join(', ')}: ${String(error)}`);
        return { kind: 'failed', failure: { kind: 'unavailable', status: 503, detail: 'Could not read the test rules for this address, try again' } };
      }
      if (decision) return outcomeOf(decision, recipients);
    }
    return undefined;
  }
}

/** A rule's decision as an API send's outcome: how the providers say the same thing. */
function outcomeOf(decision: RuleDecision, recipients: readonly string[]): SendOutcome {
  if (decision.action === 'drop') return { kind: 'dropped', text: decision.text, rule: decision.rule };
  const { rule, text } = decision;
  const failure = ((): ApiFailure => {
    switch (rule) {
      case 'reject':
        return { kind: 'rejected', detail: text, recipient: recipientIn(text, recipients) };
      case 'unavailable':
        return { kind: 'unavailable', detail: text, status: decision.httpStatus ?? 503 };
      case 'defer':
        return { kind: 'unavailable', detail: text, status: 503 };
      default:
        // greylist, throttle, rate_limit: try again later, and when.
        return { kind: 'rate_limited', detail: text, retryAfterMs: decision.retryAfterMs };
    }
  })();
  return { kind: 'failed', failure, rule };
}

/** The recipient a rule's text names (`… (mailroom test rule: reject on a@b)`), else the first. */
function recipientIn(text: string, recipients: readonly string[]): string {
  return recipients.find((r) => text.endsWith(` on ${r})`)) ?? recipients[0]!;
}

/** What an HTTP status means to a sender: 2xx taken; 408, 429 and 5xx try again; other 4xx never. */
export function httpOutcome(status: number): AttemptOutcome {
  if (status < 400) return 'accepted';
  return status === 408 || status === 429 || status >= 500 ? 'deferred' : 'rejected';
}
