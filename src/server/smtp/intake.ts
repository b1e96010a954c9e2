// SMTP intake: smtp-server speaks the protocol, this file decides what to accept.
//
// What intake must know is only the envelope, the size and the bytes. Parsing
// the MIME structure waits for the first read (store/mime-parse.ts), which is what
// keeps intake close to the rate of a server that discards everything.
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { parseMailboxAddress } from '../../contract/address.js';
import { Refusal } from '../../contract/refusal.js';
import type { Logger } from '../log.js';
import type { SmtpRuleKind } from '../../contract/smtp-lab.js';
import type { LabSender, LabStore } from '../rules/lab-store.js';
import { spokenMs, type RuleDecision } from '../rules/rule-book.js';
import type { Awaitable, MailStore, StoredMessage } from '../store/mail-store.js';
import { outcomeOfCode, splitEnhanced, type AttemptFeed, type AttemptOutcome, type AttemptStage } from './attempts.js';
import { mailIdentity } from './mail-identity.js';
import { RecipientCap } from './recipient-cap.js';
import { adaptConnections, dropConnection, isConnectionOpen, isMalformedRecipient, netServerOf } from './smtp-server-private.js';

export interface SmtpIntakeOptions {
  readonly domains: readonly string[];
  readonly maxMessageBytes: number;
  /** Distinct recipients one transaction takes; the rest are answered `452 4.5.3` (recipient-cap.ts). */
  readonly maxRecipients: number;
  /** Open connections taken; one more gets `421 4.4.5` (smtp-server-private.ts). */
  readonly maxConnections: number;
  /** Silence (ms) after which a connection is closed with `421 4.4.2`. */
  readonly idleTimeout: number;
  readonly store: MailStore;
  /** Told every reply that decided a recipient's fate (attempts.ts). */
  readonly attempts: AttemptFeed;
  /** Wall-clock ms, for the attempts' times. */
  readonly now: () => number;
  /**
   * The per-address test rules and the attempt log (rules/lab-store.ts),
   * when the SMTP rules are on. In memory it answers at once, and the
   * intake with it; a shared one (Redis) after a round trip.
   */
  readonly lab?: LabStore | undefined;
  readonly logger: Logger;
}

export interface SmtpIntake {
  readonly server: SMTPServer;
  /** Destroys every open SMTP connection and drops replies still held by a slow rule (used by close()). */
  destroyConnections(): void;
}

/** What the intake remembers of one connection, beyond smtp-server's session. */
interface Conversation {
  readonly connectedAt: number;
  /** MAIL FROM commands seen: the transaction in progress is this one. */
  transactions: number;
  /** When the transaction in progress began (see SmtpAttempt.beganAt). */
  beganAt: number;
  /** The transaction whose DATA has begun. */
  dataOf: number;
  /** The transaction whose recipients have been told their fate already (a rule answered or dropped them all). */
  settledOf: number;
  /** Why the connection is going away, when the intake knows better than "the client closed it". */
  closing?: { readonly text: string; readonly rule: SmtpRuleKind } | undefined;
  closed: boolean;
  /** The transaction's recipients, against the cap. */
  readonly recipients: RecipientCap;
}

/**
 * Runs `then` with the value: in the same tick when it is at hand (the
 * memory lab), once it resolves otherwise (`fail` when it rejects).
 */
function whenReady<T>(value: Awaitable<T>, then: (value: T) => void, fail: (error: unknown) => void, logger: Logger): void {
  if (!(value instanceof Promise)) return then(value);
  value.then(then, fail).catch((error: unknown) => logger.error(`mailroom: SMTP intake failed after a rule lookup: ${String(error)}`));
}

function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

// smtp-server adds enhanced status codes from a fixed table (550 would read
// 5.1.1), so they are switched off there and written into our own replies.
function tooBig(bytes: number | string, limit: number): Error {
  return smtpError(552, `5.3.4 Message size ${bytes} exceeds the limit of ${limit} bytes`);
}

export function createSmtpIntake(options: SmtpIntakeOptions): SmtpIntake {
  const { domains, maxMessageBytes, maxRecipients, maxConnections, idleTimeout, store, attempts, now, lab, logger } = options;
  const served = new Set(domains);
  const sockets = new Set<Socket>();
  const held = new Set<NodeJS.Timeout>();
  const conversations = new WeakMap<SMTPServerSession, Conversation>();
  const mailboxOf = (address: string) => (address.toLowerCase() === 'postmaster' ? `postmaster@${domains[0]}` : address).toLowerCase();
  const senderOf = (session: SMTPServerSession) => (session.envelope.mailFrom ? session.envelope.mailFrom.address : '');

  interface Extras {
    readonly messageId?: string | undefined;
    readonly rule?: SmtpRuleKind | undefined;
    readonly headerMessageId?: string | undefined;
    readonly headerSubject?: string | undefined;
    /** The stored copy, for an accepted attempt: handed to listeners beside the attempt. */
    readonly message?: StoredMessage | undefined;
  }

  /** Publishes the reply `code` + `reply` ("x.y.z text") given to `to` at `stage`; no code: the connection dropped. */
  const attempted = (session: SMTPServerSession, to: string, stage: AttemptStage, code: number | undefined, reply: string, extras: Extras = {}) => {
    const conversation = lab ? conversations.get(session) : undefined;
    attempts.publish(
      {
        at: now(),
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
      },
      extras.message,
    );
  };
  const refuse = (session: SMTPServerSession, to: string, stage: AttemptStage, code: number, reply: string, extras?: Extras): Error => {
    attempted(session, to, stage, code, reply, extras);
    return smtpError(code, reply);
  };
  /** Sends a reply once the attempts it logged can be read through any server: at once with the memory lab. */
  const afterLog = (send: () => void) => {
    const pending = lab?.flushed();
    // The reply goes out even when the log could not be written (the store's own error says why).
    if (pending)
      void pending.then(send, (error: unknown) => {
        logger.error(`mailroom: could not write the SMTP attempt log: ${String(error)}`);
        send();
      });
    else send();
  };
  /** When the lab's state cannot be read (a shared store out of reach): the sender is told to try again. */
  const rulesUnreadable = (error: unknown) => {
    // An unreachable store is reported once by its connection; anything else is a bug worth a line.
    if (!(error instanceof Refusal && error.status === 503)) logger.error(`mailroom: could not read the SMTP test rules: ${String(error)}`);
    return '4.3.0 Could not read the test rules for this address, try again';
  };
  const labSenderOf = (session: SMTPServerSession): LabSender => ({ clientIp: session.remoteAddress, from: senderOf(session) });

  /** Runs `then` after `delayMs` (a slow rule), unless the server closes first. */
  const holdReply = (delayMs: number, then: () => void) => {
    const timer = setTimeout(() => {
      held.delete(timer);
      then();
    }, delayMs);
    held.add(timer);
  };
  const heldText = (delayMs: number, to: string) =>
    `The client closed the connection while the reply was held for ${spokenMs(delayMs)} (mailroom test rule: slow on ${to})`;

  /** A rule's drop: the attempt is logged, then (once the log holds it) the connection closes without a reply. */
  const drop = (
    session: SMTPServerSession,
    decision: Extract<RuleDecision, { action: 'drop' }>,
    recipients: readonly string[],
    stage: AttemptStage,
    extras: Extras = {},
  ) => {
    const conversation = conversations.get(session);
    if (conversation) conversation.closing = { text: decision.text, rule: decision.rule };
    for (const to of recipients) attempted(session, to, stage, undefined, decision.text, { ...extras, rule: decision.rule });
    afterLog(() => dropConnection(server, session));
  };

  /** RCPT TO with the rules on: held by a slow rule, then answered as the first rule that has something to say. */
  const rcptByRules = (ruleLab: LabStore, session: SMTPServerSession, to: string, callback: (error?: Error) => void) => {
    const sender = labSenderOf(session);
    const stepped = ruleLab.step('rcpt', [to], sender);
    // the memory lab, for an address without rules: nothing more to ask
    if (stepped === undefined) return callback();
    const conversation = conversations.get(session);
    const answer = (decision: RuleDecision | undefined) => {
      if (!decision) return callback();
      if (decision.action === 'drop') return drop(session, decision, [to], 'rcpt');
      // A 421 closes the connection (smtp-server does): the transaction's other recipients are lost with it.
      if (decision.code === 421 && conversation) {
        conversation.closing = {
          text: `The server closed the connection after refusing ${to} with 421 (mailroom test rule: ${decision.rule} on ${to})`,
          rule: decision.rule,
        };
      }
      callback(refuse(session, to, 'rcpt', decision.code, `${decision.enhancedCode} ${decision.text}`, { rule: decision.rule }));
    };
    const unreadable = (error: unknown) => callback(refuse(session, to, 'rcpt', 451, rulesUnreadable(error)));
    whenReady(
      stepped,
      (step) => {
        if (!step) return callback();
        if (step.holdMs === 0) return answer(step.decision);
        const heldMs = step.holdMs;
        if (conversation) conversation.closing = { text: heldText(heldMs, to), rule: 'slow' };
        holdReply(heldMs, () => {
          if (conversation?.closing?.rule === 'slow') conversation.closing = undefined;
          if (!isConnectionOpen(server, session)) {
            attempted(session, to, 'rcpt', undefined, heldText(heldMs, to), { rule: 'slow' });
            return;
          }
          whenReady(ruleLab.decide('rcpt', [to], sender), answer, unreadable, logger);
        });
      },
      unreadable,
      logger,
    );
  };

  const server: SMTPServer = new SMTPServer({
    name: 'mailroom',
    banner: 'mailroom test mail server',
    size: maxMessageBytes,
    // Apps under test often insist on logging in: any credentials are accepted,
    // and so are plain connections that never authenticate.
    authOptional: true,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN', 'CRAM-MD5', 'XOAUTH2'],
    // Offering STARTTLS with a self-signed certificate would make clients
    // upgrade on their own and then fail verification.
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: true,
    logger: false,
    closeTimeout: 1000,
    maxClients: maxConnections,
    socketTimeout: idleTimeout,

    // Answered in the same tick (the stock hook defers with setImmediate): with
    // the greeting sent at once (adaptConnections), the 220 is written before a
    // byte from the client is read, so no client is ever told it talks too soon.
    onConnect(session, callback) {
      const at = now();
      conversations.set(session, {
        connectedAt: at,
        transactions: 0,
        beganAt: at,
        dataOf: 0,
        settledOf: 0,
        closed: false,
        recipients: new RecipientCap(maxRecipients),
      });
      callback();
    },
    // A transaction's recipients whose fate no reply decided (the client
    // went away after RCPT TO, or in the middle of DATA) are dropped.
    onClose(session) {
      const conversation = conversations.get(session);
      if (conversation) conversation.closed = true;
      const recipients = session.envelope?.rcptTo;
      if (!recipients || recipients.length === 0) return;
      if (conversation && conversation.settledOf === conversation.transactions) return;
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
      for (const rcpt of recipients) attempted(session, mailboxOf(rcpt.address), stage, undefined, text, { rule: conversation?.closing?.rule });
    },
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? 'anonymous' });
    },
    // MAIL FROM and RCPT TO answer on the next turn, as smtp-server's own
    // hooks do. Answered in the same tick, both together, smtp-server 3.21.6
    // loses its place in pipelined input: after a second transaction sent in
    // one go (MAIL, RCPT, DATA, the message, MAIL, RCPT, DATA, the message)
    // it stores both and then never reads another command, so the client's
    // QUIT hangs (found by test/server/fuzz-smtp.test.ts; pinned in smtp.test.ts).
    onMailFrom(_address, session, callback) {
      const conversation = conversations.get(session);
      if (conversation) {
        conversation.transactions++;
        // The first transaction began when the client connected; a later one on the same connection with its MAIL FROM.
        conversation.beganAt = conversation.transactions === 1 ? conversation.connectedAt : now();
        conversation.recipients.reset();
      }
      setImmediate(callback);
    },
    onRcptTo(address: SMTPServerAddress, session, reply) {
      // A refusal is logged as an attempt: it goes out once the log holds it (afterLog).
      const cap = conversations.get(session)?.recipients;
      const callback = (error?: Error) => {
        if (!error) cap?.accepted(address.address);
        setImmediate(() => (error ? afterLog(() => reply(error)) : reply()));
      };
      // RFC 5321 requires the domainless postmaster to be accepted.
      const given = mailboxOf(address.address);
      const overCap = cap?.refusal(address.address);
      if (overCap) return callback(refuse(session, given, 'rcpt', 452, overCap));
      const parsed = isMalformedRecipient(address) ? undefined : parseMailboxAddress(given);
      if (!parsed) return callback(refuse(session, given, 'rcpt', 553, `5.1.3 Malformed recipient address <${address.address}>`));
      if (!served.has(parsed.domain)) {
        return callback(refuse(session, given, 'rcpt', 550, `5.1.2 Domain ${parsed.domain} is not served here (served: ${domains.join(', ')})`));
      }
      if (lab) return rcptByRules(lab, session, given, callback);
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const conversation = conversations.get(session);
      if (conversation) conversation.dataOf = conversation.transactions;
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!stream.sizeExceeded) chunks.push(chunk);
      });
      stream.once('end', () => {
        const mailboxes = session.envelope.rcptTo.map((rcpt) => mailboxOf(rcpt.address));
        const raw = stream.sizeExceeded ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
        // With the rules on, a mail refused or dropped at the end of DATA is
        // logged with its Message-ID and Subject (a retry of it can then be
        // told from a new mail); a stored one's are read from the store when
        // the log is read, which keeps them off the path of every mail.
        const identify = (): Extras => {
          if (!lab || !raw) return {};
          const identity = mailIdentity(raw);
          return { headerMessageId: identity.messageId, headerSubject: identity.subject };
        };
        const refuseAll = (code: number, reply: string, rule?: SmtpRuleKind) => {
          const known = identify();
          for (const mailbox of mailboxes) attempted(session, mailbox, 'data', code, reply, { ...known, rule });
          afterLog(() => callback(smtpError(code, reply)));
        };
        if (!raw) return refuseAll(552, tooBig(bytes, maxMessageBytes).message);
        const accepted = (stored: readonly StoredMessage[]) => {
          const first = stored[0];
          const reply = stored.length === 1 && first ? `2.6.0 Stored as ${first.id} for ${first.mailbox}` : `2.6.0 Stored for ${stored.length} mailboxes`;
          for (const message of stored) attempted(session, message.mailbox, 'data', 250, reply, { messageId: message.id, message });
          afterLog(() => callback(null, reply));
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
        if (!lab) return deliver();
        const sender = labSenderOf(session);
        const stepped = lab.step('data', mailboxes, sender);
        // the memory lab, when no recipient has rules: stored and answered in this tick
        if (stepped === undefined) return deliver();

        // SMTP has one reply at the end of DATA for the whole transaction: the
        // first recipient (in RCPT order) whose rules have something to say
        // answers for all of them, and its reply names whose rule it was.
        const decided = (decision: RuleDecision | undefined) => {
          if (!decision) return deliver();
          if (conversation) conversation.settledOf = conversation.transactions;
          if (decision.action === 'drop') return drop(session, decision, mailboxes, 'data', identify());
          refuseAll(decision.code, `${decision.enhancedCode} ${decision.text}`, decision.rule);
        };
        const unreadable = (error: unknown) => void refuseAll(451, rulesUnreadable(error));
        whenReady(
          stepped,
          (step) => {
            if (!step) return deliver();
            if (step.holdMs === 0) return decided(step.decision);
            if (conversation) conversation.closing = { text: heldText(step.holdMs, step.heldFor), rule: 'slow' };
            holdReply(step.holdMs, () => {
              // Gone while held: onClose has logged its recipients as dropped.
              if (conversation?.closed || !isConnectionOpen(server, session)) return;
              if (conversation) conversation.closing = undefined;
              whenReady(lab.decide('data', mailboxes, sender), decided, unreadable, logger);
            });
          },
          unreadable,
          logger,
        );
      });
    },
  });
  adaptConnections(server, { sizeReply: (declared) => tooBig(declared, maxMessageBytes).message });

  netServerOf(server).on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('error', (error: Error & { code?: string }) => {
    // Client-side network errors (resets, timeouts) are routine for a test server.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === 'ETIMEDOUT' || error.code === 'SocketError') return;
    if ((error as { code?: string }).code === 'EADDRINUSE') return; // reported by listen()
    logger.warn(`mailroom: SMTP: ${error.message}`);
  });

  return {
    server,
    destroyConnections() {
      for (const timer of held) clearTimeout(timer);
      held.clear();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
