// The deferral lab's per-stage decisions in the SMTP intake: at RCPT TO and
// at the end of DATA, the first rule with something to say answers (a
// refusal, a drop of the connection), possibly after holding the reply (a
// slow rule). Used only when the lab is on; the lab answers at once in memory,
// and the reply goes out in the same tick, or after a round trip (Redis).
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import { Refusal } from '../../contract/refusal.js';
import type { Awaitable } from '../base/awaitable.js';
import type { Logger } from '../base/log.js';
import type { AttemptStage } from '../base/smtp-attempts.js';
import type { LabSender, LabStore } from '../rules/lab-store.js';
import { spokenMs, type RuleDecision } from '../rules/rule-book.js';
import { senderOf, type AttemptExtras, type AttemptReporter } from './attempt-reporter.js';
import type { Conversations } from './conversations.js';
import { dropConnection, isConnectionOpen } from './smtp-server-private.js';

/**
 * Runs `then` with the value: in the same tick when it is at hand (the
 * memory lab), once it resolves otherwise (`fail` when it rejects).
 */
function whenReady<T>(value: Awaitable<T>, then: (value: T) => void, fail: (error: unknown) => void, logger: Logger): void {
  if (!(value instanceof Promise)) return then(value);
  value.then(then, fail).catch((error: unknown) => logger.error(`mailroom: SMTP intake failed after a rule lookup: ${String(error)}`));
}

const heldText = (delayMs: number, to: string) =>
  `The client closed the connection while the reply was held for ${spokenMs(delayMs)} (mailroom test rule: slow on ${to})`;

const labSenderOf = (session: SMTPServerSession): LabSender => ({ clientIp: session.remoteAddress, from: senderOf(session) });

/** Replies held back by a slow rule, dropped when the server closes. */
export class ReplyHolds {
  readonly #held = new Set<NodeJS.Timeout>();

  /** Runs `then` after `delayMs`, unless the server closes first. */
  hold(delayMs: number, then: () => void): void {
    const timer = setTimeout(() => {
      this.#held.delete(timer);
      then();
    }, delayMs);
    this.#held.add(timer);
  }

  clear(): void {
    for (const timer of this.#held) clearTimeout(timer);
    this.#held.clear();
  }
}

/** How the end of DATA goes on, once the rules have had their say. */
export interface DataOutcome {
  /** No rule spoke: store the mail and answer for it. */
  deliver(): void;
  /** A rule (or an unreadable lab) refused the whole transaction. */
  refuseAll(code: number, reply: string, rule?: RuleDecision['rule']): void;
  /** The mail's Message-ID and Subject, for the attempts of a mail that is not stored. */
  identify(): AttemptExtras;
}

export interface RuleStepsOptions {
  readonly lab: LabStore;
  readonly reporter: AttemptReporter;
  readonly conversations: Conversations;
  readonly holds: ReplyHolds;
  /** The SMTP servers sharing the steps (made after the steps, which their hooks call). */
  readonly servers: () => readonly SMTPServer[];
  readonly logger: Logger;
}

export class RuleSteps {
  readonly #o: RuleStepsOptions;

  constructor(options: RuleStepsOptions) {
    this.#o = options;
  }

  /** When the lab's state cannot be read (a shared store out of reach): the reply (x.y.z text) that tells the sender to try again. */
  unreadable(error: unknown): string {
    // An unreachable store is reported once by its connection; anything else is a bug worth a line.
    if (!(error instanceof Refusal && error.status === 503)) this.#o.logger.error(`mailroom: could not read the SMTP test rules: ${String(error)}`);
    return '4.3.0 Could not read the test rules for this address, try again';
  }

  /** A rule's drop: the attempt is logged, then (once the log holds it) the connection closes without a reply. */
  #drop(
    session: SMTPServerSession,
    decision: Extract<RuleDecision, { action: 'drop' }>,
    recipients: readonly string[],
    stage: AttemptStage,
    extras: AttemptExtras = {},
  ): void {
    const { reporter, conversations, servers } = this.#o;
    const conversation = conversations.get(session);
    if (conversation) conversation.closing = { text: decision.text, rule: decision.rule };
    for (const to of recipients) reporter.attempted(session, to, stage, undefined, decision.text, { ...extras, rule: decision.rule });
    reporter.afterLog(() => dropConnection(servers(), session));
  }

  /** RCPT TO: held by a slow rule, then answered as the first rule that has something to say. */
  rcpt(session: SMTPServerSession, to: string, callback: (error?: Error) => void): void {
    const { lab, reporter, conversations, holds, servers, logger } = this.#o;
    const sender = labSenderOf(session);
    const stepped = lab.step('rcpt', [to], sender);
    // the memory lab, for an address without rules: nothing more to ask
    if (stepped === undefined) return callback();
    const conversation = conversations.get(session);
    const answer = (decision: RuleDecision | undefined) => {
      if (!decision) return callback();
      if (decision.action === 'drop') return this.#drop(session, decision, [to], 'rcpt');
      // A 421 closes the connection (smtp-server does): the transaction's other recipients are lost with it.
      if (decision.code === 421 && conversation) {
        conversation.closing = {
          text: `The server closed the connection after refusing ${to} with 421 (mailroom test rule: ${decision.rule} on ${to})`,
          rule: decision.rule,
        };
      }
      callback(reporter.refuse(session, to, 'rcpt', decision.code, `${decision.enhancedCode} ${decision.text}`, { rule: decision.rule }));
    };
    const unreadable = (error: unknown) => callback(reporter.refuse(session, to, 'rcpt', 451, this.unreadable(error)));
    whenReady(
      stepped,
      (step) => {
        if (!step) return callback();
        conversations.ruled(session);
        if (step.holdMs === 0) return answer(step.decision);
        const heldMs = step.holdMs;
        if (conversation) conversation.closing = { text: heldText(heldMs, to), rule: 'slow' };
        holds.hold(heldMs, () => {
          if (conversation?.closing?.rule === 'slow') conversation.closing = undefined;
          if (!isConnectionOpen(servers(), session)) {
            reporter.attempted(session, to, 'rcpt', undefined, heldText(heldMs, to), { rule: 'slow' });
            return;
          }
          whenReady(lab.decide('rcpt', [to], sender), answer, unreadable, logger);
        });
      },
      unreadable,
      logger,
    );
  }

  /**
   * The end of DATA. SMTP has one reply there for the whole transaction: the
   * first recipient (in RCPT order) whose rules have something to say
   * answers for all of them, and its reply names whose rule it was.
   */
  data(session: SMTPServerSession, mailboxes: readonly string[], outcome: DataOutcome): void {
    const { lab, conversations, holds, servers, logger } = this.#o;
    const sender = labSenderOf(session);
    const stepped = lab.step('data', mailboxes, sender);
    // the memory lab, when no recipient has rules: stored and answered in this tick
    if (stepped === undefined) return outcome.deliver();
    const conversation = conversations.get(session);
    const decided = (decision: RuleDecision | undefined) => {
      if (!decision) return outcome.deliver();
      if (conversation) conversation.settledOf = conversation.transactions;
      if (decision.action === 'drop') return this.#drop(session, decision, mailboxes, 'data', outcome.identify());
      outcome.refuseAll(decision.code, `${decision.enhancedCode} ${decision.text}`, decision.rule);
    };
    const unreadable = (error: unknown) => void outcome.refuseAll(451, this.unreadable(error));
    whenReady(
      stepped,
      (step) => {
        if (!step) return outcome.deliver();
        if (step.holdMs === 0) return decided(step.decision);
        if (conversation) conversation.closing = { text: heldText(step.holdMs, step.heldFor), rule: 'slow' };
        holds.hold(step.holdMs, () => {
          // Gone while held: onClose has logged its recipients as dropped.
          if (conversation?.closed || !isConnectionOpen(servers(), session)) return;
          if (conversation) conversation.closing = undefined;
          whenReady(lab.decide('data', mailboxes, sender), decided, unreadable, logger);
        });
      },
      unreadable,
      logger,
    );
  }
}
