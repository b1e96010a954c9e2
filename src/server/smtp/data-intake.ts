// The end of DATA: the message is read whole (up to the size limit), the lab
// has its say when it is on (rule-steps.ts), and the mail is stored for every
// recipient, answered `250` only once it is visible - or refused for all of
// them, each refusal published as an attempt.
//
// With a lab kept beside the store (Redis), the lab's look-up, the delivery
// and the log of the accepted attempts are one round trip for mail to
// addresses without rules (rules/lab-store.ts LabDelivery); mail to an
// address with rules takes the usual way.
//
// What intake must know is only the envelope, the size and the bytes. Parsing
// the MIME structure waits for the first read (store/mime-parse.ts), which is
// what keeps intake close to the rate of a server that discards everything.
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { SmtpRuleKind } from '../../contract/smtp-lab.js';
import type { Logger } from '../base/log.js';
import type { StoredMessage } from '../base/stored-message.js';
import { mailIdentity } from '../store/mail-identity.js';
import type { MailStore } from '../store/mail-store.js';
import { senderOf, smtpError, type AttemptExtras, type AttemptReporter } from './attempt-reporter.js';
import type { Conversations } from './conversations.js';
import type { DataOutcome, RuleSteps } from './rule-steps.js';
import type { DeliveredCopy, LabDelivery } from '../rules/lab-store.js';

/** The 250 at the end of DATA: it names the copy when there is one. */
function storedReply(copies: readonly DeliveredCopy[]): string {
  const first = copies[0];
  return copies.length === 1 && first ? `2.6.0 Stored as ${first.id} for ${first.mailbox}` : `2.6.0 Stored for ${copies.length} mailboxes`;
}

// smtp-server adds enhanced status codes from a fixed table (550 would read
// 5.1.1), so they are switched off there and written into our own replies.
export function tooBig(bytes: number | string, limit: number): Error {
  return smtpError(552, `5.3.4 Message size ${bytes} exceeds the limit of ${limit} bytes`);
}

export interface DataIntakeOptions {
  readonly store: MailStore;
  readonly maxMessageBytes: number;
  readonly reporter: AttemptReporter;
  readonly conversations: Conversations;
  /** The lab's decisions, when the SMTP rules are on. */
  readonly rules: RuleSteps | undefined;
  /** The end of DATA in one round trip, when the lab is kept beside the store (Redis). */
  readonly delivery: LabDelivery | undefined;
  /** The mailbox key of a recipient as RCPT TO named it. */
  readonly mailboxOf: (address: string) => string;
  /** Wall-clock ms, for the attempts' times. */
  readonly now: () => number;
  readonly logger: Logger;
}

type DataCallback = (error?: Error | null, reply?: string) => void;

export class DataIntake {
  readonly #o: DataIntakeOptions;

  constructor(options: DataIntakeOptions) {
    this.#o = options;
  }

  /** smtp-server's `onData`: reads the message, then settles the transaction. */
  receive(stream: SMTPServerDataStream, session: SMTPServerSession, callback: DataCallback): void {
    this.#o.conversations.dataBegan(session);
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (!stream.sizeExceeded) chunks.push(chunk);
    });
    stream.once('end', () => {
      const raw = stream.sizeExceeded ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
      this.#settle(session, raw, bytes, callback);
    });
  }

  /** Answers the transaction for all its recipients: stored, or refused (too big, a rule, a store that failed). */
  #settle(session: SMTPServerSession, raw: Buffer | undefined, bytes: number, callback: DataCallback): void {
    const { store, maxMessageBytes, reporter, rules, delivery, mailboxOf, logger } = this.#o;
    const mailboxes = session.envelope.rcptTo.map((rcpt) => mailboxOf(rcpt.address));
    // With the rules on, a mail refused or dropped at the end of DATA is
    // logged with its Message-ID and Subject (a retry of it can then be
    // told from a new mail); a stored one's are read from the store when
    // the log is read, which keeps them off the path of every mail.
    const identify = (): AttemptExtras => {
      if (!rules || !raw) return {};
      const identity = mailIdentity(raw);
      return { headerMessageId: identity.messageId, headerSubject: identity.subject };
    };
    const refuseAll = (code: number, reply: string, rule?: SmtpRuleKind) => {
      const known = identify();
      for (const mailbox of mailboxes) reporter.attempted(session, mailbox, 'data', code, reply, { ...known, rule });
      reporter.afterLog(() => callback(smtpError(code, reply)));
    };
    if (!raw) return refuseAll(552, tooBig(bytes, maxMessageBytes).message);
    const accepted = (stored: readonly StoredMessage[]) => {
      const reply = storedReply(stored);
      for (const message of stored) reporter.attempted(session, message.mailbox, 'data', 250, reply, { messageId: message.id, message });
      reporter.afterLog(() => callback(null, reply));
    };
    const unstored = (error: unknown) => {
      logger.error(`mailroom: could not store a message for ${mailboxes.join(', ')}: ${String(error)}`);
      refuseAll(451, '4.3.0 Could not store the message, try again');
    };
    // The memory store answers at once, and its 250 goes out in the same
    // tick as before the store boundary; a shared store's after its reply.
    const deliver = () => {
      let result;
      try {
        result = store.deliver(mailboxes, raw, senderOf(session));
      } catch (error) {
        return unstored(error);
      }
      if (Array.isArray(result)) return accepted(result);
      result.then(accepted, unstored);
    };
    if (!rules) return deliver();
    const outcome: DataOutcome = { deliver, refuseAll, identify };
    // A recipient with rules at RCPT TO very likely has them still: the lab's steps first, sparing the try.
    if (!delivery || this.#o.conversations.isRuled(session)) return rules.data(session, mailboxes, outcome);
    // One round trip: stored and its attempts logged unless a recipient has
    // rules; then the lab's steps decide first. The attempts are made once
    // for the log (with their ids left as holes) and once for the feed, at one time.
    const at = this.#o.now();
    const acceptedAttempts = (copies: readonly DeliveredCopy[]) => {
      const reply = storedReply(copies);
      return copies.map((copy) => reporter.attemptOf(session, copy.mailbox, 'data', 250, reply, { messageId: copy.id }, at));
    };
    delivery.deliverUnlessRuled(mailboxes, raw, senderOf(session), acceptedAttempts).then(
      (stored) => {
        if (!stored) return rules.data(session, mailboxes, outcome);
        const attempts = acceptedAttempts(stored);
        stored.forEach((message, n) => reporter.publish(attempts[n]!, message));
        reporter.afterLog(() => callback(null, storedReply(stored)));
      },
      // the rules could not be read (nor the mail stored): as when the lab's look-up fails on its own
      (error: unknown) => refuseAll(451, rules.unreadable(error)),
    );
  }
}
