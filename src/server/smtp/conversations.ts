// Connection bookkeeping: what the SMTP intake remembers of each connection
// beyond smtp-server's session - when it opened, which transaction is in
// progress and how far it got, whether a rule already told its recipients
// their fate, and why the connection is going away when the intake knows
// better than "the client closed it". The attempt feed reads it to date a
// transaction and to report, at close, the recipients no reply decided.
import type { SMTPServerSession } from 'smtp-server';
import type { SmtpRuleKind } from '../../contract/smtp-lab.js';
import type { AttemptStage } from '../base/smtp-attempts.js';
import { RecipientCap } from './recipient-cap.js';

export interface Conversation {
  readonly connectedAt: number;
  /** MAIL FROM commands seen: the transaction in progress is this one. */
  transactions: number;
  /** When the transaction in progress began (see SmtpAttempt.beganAt). */
  beganAt: number;
  /** The transaction whose DATA has begun. */
  dataOf: number;
  /** The transaction whose recipients have been told their fate already (a rule answered or dropped them all). */
  settledOf: number;
  /** The transaction a recipient of which had rules at RCPT TO: its end of DATA asks the lab first (data-intake.ts). */
  ruledOf: number;
  /** Why the connection is going away, when the intake knows better than "the client closed it". */
  closing?: { readonly text: string; readonly rule: SmtpRuleKind } | undefined;
  closed: boolean;
  /** The transaction's recipients, against the cap. */
  readonly recipients: RecipientCap;
}

/** How the recipients of a transaction no reply decided were lost, for the attempts logged at close. */
export interface Unsettled {
  readonly stage: AttemptStage;
  readonly text: string;
  readonly rule: SmtpRuleKind | undefined;
}

export class Conversations {
  readonly #bySession = new WeakMap<SMTPServerSession, Conversation>();
  readonly #maxRecipients: number;

  /** `maxRecipients`: distinct recipients one transaction takes (recipient-cap.ts). */
  constructor(maxRecipients: number) {
    this.#maxRecipients = maxRecipients;
  }

  get(session: SMTPServerSession): Conversation | undefined {
    return this.#bySession.get(session);
  }

  opened(session: SMTPServerSession, at: number): void {
    const recipients = new RecipientCap(this.#maxRecipients);
    this.#bySession.set(session, { connectedAt: at, transactions: 0, beganAt: at, dataOf: 0, settledOf: 0, ruledOf: 0, closed: false, recipients });
  }

  /** MAIL FROM: the first transaction began when the client connected; a later one on the same connection now. */
  transactionBegan(session: SMTPServerSession, now: () => number): void {
    const conversation = this.#bySession.get(session);
    if (!conversation) return;
    conversation.transactions++;
    conversation.beganAt = conversation.transactions === 1 ? conversation.connectedAt : now();
    conversation.recipients.reset();
  }

  /** A recipient of the transaction in progress has rules. */
  ruled(session: SMTPServerSession): void {
    const conversation = this.#bySession.get(session);
    if (conversation) conversation.ruledOf = conversation.transactions;
  }

  /** Whether a recipient of the transaction in progress had rules at RCPT TO. */
  isRuled(session: SMTPServerSession): boolean {
    const conversation = this.#bySession.get(session);
    return conversation !== undefined && conversation.ruledOf === conversation.transactions && conversation.transactions > 0;
  }

  dataBegan(session: SMTPServerSession): void {
    const conversation = this.#bySession.get(session);
    if (conversation) conversation.dataOf = conversation.transactions;
  }

  /**
   * Marks the connection closed; returns how its transaction's recipients
   * were lost when no reply decided their fate (the client went away after
   * RCPT TO, or in the middle of DATA), undefined when there are none.
   */
  closed(session: SMTPServerSession): Unsettled | undefined {
    const conversation = this.#bySession.get(session);
    if (conversation) conversation.closed = true;
    const recipients = session.envelope?.rcptTo;
    if (!recipients || recipients.length === 0) return undefined;
    if (conversation && conversation.settledOf === conversation.transactions) return undefined;
    const stage: AttemptStage = conversation && conversation.dataOf === conversation.transactions ? 'data' : 'rcpt';
    // smtp-server keeps its last refusal on the session: a 421 it sent (idle, too many bad commands) closed the connection.
    const lastRefusal = (session as { error?: unknown }).error;
    const text =
      conversation?.closing?.text ??
      (typeof lastRefusal === 'string' && lastRefusal.startsWith('421')
        ? `The server closed the connection: ${lastRefusal}`
        : stage === 'data'
          ? 'The client closed the connection before the end of DATA'
          : 'The client closed the connection before DATA');
    return { stage, text, rule: conversation?.closing?.rule };
  }
}
