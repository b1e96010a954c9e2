// The SMTP intake's side of the attempt feed (base/smtp-attempts.ts): every
// reply that decides a recipient's fate is published as an attempt, and,
// with the deferral lab on, the reply goes out only once the lab's log holds
// it (`afterLog`), so a test that reads the log after its send sees it.
import type { SMTPServerSession } from 'smtp-server';
import type { SmtpRuleKind } from '../../contract/smtp-lab.js';
import { outcomeOfCode, splitEnhanced, type AttemptFeed, type AttemptOutcome, type AttemptStage, type SmtpAttempt } from '../base/smtp-attempts.js';
import type { StoredMessage } from '../base/stored-message.js';
import type { Logger } from '../base/log.js';
import type { LabStore } from '../rules/lab-store.js';
import type { Conversations } from './conversations.js';

/** What an attempt may say beyond its reply. */
export interface AttemptExtras {
  readonly messageId?: string | undefined;
  readonly rule?: SmtpRuleKind | undefined;
  readonly headerMessageId?: string | undefined;
  readonly headerSubject?: string | undefined;
  /** The stored copy, for an accepted attempt: handed to listeners beside the attempt. */
  readonly message?: StoredMessage | undefined;
}

export function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/** MAIL FROM, `''` for the null sender. */
export function senderOf(session: SMTPServerSession): string {
  return session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
}

export interface AttemptReporterOptions {
  readonly attempts: AttemptFeed;
  readonly now: () => number;
  readonly lab: LabStore | undefined;
  readonly conversations: Conversations;
  readonly logger: Logger;
}

export class AttemptReporter {
  readonly #options: AttemptReporterOptions;

  constructor(options: AttemptReporterOptions) {
    this.#options = options;
  }

  /** Publishes the reply `code` + `reply` ("x.y.z text") given to `to` at `stage`; no code: the connection dropped. */
  attempted(session: SMTPServerSession, to: string, stage: AttemptStage, code: number | undefined, reply: string, extras: AttemptExtras = {}): void {
    this.#options.attempts.publish(this.attemptOf(session, to, stage, code, reply, extras), extras.message);
  }

  /** The attempt `attempted` publishes, made at `at` (now by default), without publishing it. */
  attemptOf(
    session: SMTPServerSession,
    to: string,
    stage: AttemptStage,
    code: number | undefined,
    reply: string,
    extras: AttemptExtras = {},
    at = this.#options.now(),
  ): SmtpAttempt {
    const { lab, conversations } = this.#options;
    const conversation = lab ? conversations.get(session) : undefined;
    return {
      at,
      clientIp: session.remoteAddress,
      from: senderOf(session),
      to,
      stage,
      code,
      ...(code === undefined ? { enhancedCode: undefined, text: reply } : splitEnhanced(reply)),
      outcome: code === undefined ? ('dropped' satisfies AttemptOutcome) : outcomeOfCode(code),
      messageId: extras.messageId,
      beganAt: conversation?.beganAt,
      rule: extras.rule,
      headerMessageId: extras.headerMessageId,
      headerSubject: extras.headerSubject,
    };
  }

  /** Publishes an attempt made by `attemptOf`, `message` beside it (an accepted attempt's stored copy). */
  publish(attempt: SmtpAttempt, message: StoredMessage): void {
    this.#options.attempts.publish(attempt, message);
  }

  /** Publishes the refusal and returns it as the error smtp-server answers with. */
  refuse(session: SMTPServerSession, to: string, stage: AttemptStage, code: number, reply: string, extras?: AttemptExtras): Error {
    this.attempted(session, to, stage, code, reply, extras);
    return smtpError(code, reply);
  }

  /** Sends a reply once the attempts it logged can be read through any server: at once with the memory lab. */
  afterLog(send: () => void): void {
    const pending = this.#options.lab?.flushed();
    // The reply goes out even when the log could not be written (the store's own error says why).
    if (pending)
      void pending.then(send, (error: unknown) => {
        this.#options.logger.error(`mailroom: could not write the SMTP attempt log: ${String(error)}`);
        send();
      });
    else send();
  }
}
