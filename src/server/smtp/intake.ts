// SMTP intake: smtp-server speaks the protocol, this file composes what
// decides what to accept, as named steps each in its file:
// - conversations.ts: the connection bookkeeping (which transaction, how far);
// - attempt-reporter.ts: the attempt feed, every reply that decides a fate;
// - rule-steps.ts: the deferral lab's decisions at RCPT TO and end of DATA;
// - data-intake.ts: the message read, stored and answered at the end of DATA.
// Here: the recipient checks every server makes (a well-formed address, in a
// served domain unless the server catches all), STARTTLS required before MAIL FROM when asked, smtp-server's
// options, and the open sockets. The SMTP port and the implicit-TLS port are
// two smtp-server instances made from the same steps: one attempt log, one
// set of rules, one connection cap.
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerOptions } from 'smtp-server';
import { parseMailboxAddress } from '../../contract/address.js';
import type { Logger } from '../base/log.js';
import type { AttemptFeed } from '../base/smtp-attempts.js';
import type { LabStore } from '../rules/lab-store.js';
import type { MailStore } from '../store/mail-store.js';
import { AttemptReporter } from './attempt-reporter.js';
import { Conversations } from './conversations.js';
import { DataIntake, tooBig } from './data-intake.js';
import { smtpError } from './attempt-reporter.js';
import { ReplyHolds, RuleSteps } from './rule-steps.js';
import { adaptConnections, isMalformedRecipient, netServerOf } from './smtp-server-private.js';
import type { TlsCertificate } from './tls-certificate.js';

/** SMTP over TLS: the certificate both listeners present, and where TLS is offered. */
export interface SmtpTlsOptions {
  readonly certificate: TlsCertificate;
  /** STARTTLS offered on the SMTP port. */
  readonly starttls: boolean;
  /** MAIL FROM refused before STARTTLS (`530 5.7.0`). */
  readonly required: boolean;
  /** A second server that speaks TLS from the first byte (implicit TLS), sharing every step. */
  readonly implicit: boolean;
}

export interface SmtpIntakeOptions {
  readonly domains: readonly string[];
  /** Take mail for every domain; else `550 5.1.2` for a domain not in `domains`. */
  readonly catchAll: boolean;
  readonly maxMessageBytes: number;
  /** Distinct recipients one transaction takes; the rest are answered `452 4.5.3` (recipient-cap.ts). */
  readonly maxRecipients: number;
  /** Open connections taken; one more gets `421 4.4.5` (smtp-server-private.ts). */
  readonly maxConnections: number;
  /** Silence (ms) after which a connection is closed with `421 4.4.2`. */
  readonly idleTimeout: number;
  readonly store: MailStore;
  /** Told every reply that decided a recipient's fate (base/smtp-attempts.ts). */
  readonly attempts: AttemptFeed;
  /** Wall-clock ms, for the attempts' times. */
  readonly now: () => number;
  /**
   * The per-address test rules and the attempt log (rules/lab-store.ts),
   * when the SMTP rules are on. In memory it answers at once, and the
   * intake with it; a shared one (Redis) after a round trip.
   */
  readonly lab?: LabStore | undefined;
  /** SMTP over TLS; undefined: none, STARTTLS not even offered. */
  readonly tls?: SmtpTlsOptions | undefined;
  readonly logger: Logger;
}

export interface SmtpIntake {
  readonly server: SMTPServer;
  /** The implicit-TLS server (`tls.implicit`), made from the same steps as `server`; undefined when not asked for. */
  readonly secureServer: SMTPServer | undefined;
  /** The certificate (PEM) SMTP over TLS presents; undefined when TLS is off. */
  readonly certificate: string | undefined;
  /** Destroys every open SMTP connection and drops replies still held by a slow rule (used by close()). */
  destroyConnections(): void;
}

/** Tracks the open sockets in `sockets` (for close) and reports the server's errors worth reporting. */
function watchConnections(server: SMTPServer, sockets: Set<Socket>, logger: Logger): void {
  netServerOf(server).on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('error', (error: Error & { code?: string }) => {
    // Client-side network errors (resets, timeouts) are routine for a test server.
    if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || error.code === 'ETIMEDOUT' || error.code === 'SocketError') return;
    if (error.code === 'EADDRINUSE') return; // reported by listen()
    logger.warn(`mailroom: SMTP: ${error.message}`);
  });
}

/** The refusal of MAIL FROM on a connection that has not issued STARTTLS, when TLS is required. */
const STARTTLS_FIRST = '5.7.0 Must issue a STARTTLS command first';

/** How the server speaks SMTP, the same for every server. */
const PROTOCOL: SMTPServerOptions = {
  name: 'mailroom',
  banner: 'mailroom test mail server',
  // Apps under test often insist on logging in: any credentials are accepted,
  // and so are plain connections that never authenticate.
  authOptional: true,
  allowInsecureAuth: true,
  authMethods: ['PLAIN', 'LOGIN', 'CRAM-MD5', 'XOAUTH2'],
  // Offering STARTTLS with a self-signed certificate would make clients
  // upgrade on their own and then fail verification: offered only when
  // asked for (SmtpIntakeOptions.tls).
  disabledCommands: ['STARTTLS'],
  disableReverseLookup: true,
  hideENHANCEDSTATUSCODES: true,
  logger: false,
  closeTimeout: 1000,
};

export function createSmtpIntake(options: SmtpIntakeOptions): SmtpIntake {
  const { domains, catchAll, maxMessageBytes, maxRecipients, maxConnections, idleTimeout, store, attempts, now, lab, tls, logger } = options;
  const served = new Set(domains);
  const holds = new ReplyHolds();
  const conversations = new Conversations(maxRecipients);
  const mailboxOf = (address: string) => (address.toLowerCase() === 'postmaster' ? `postmaster@${domains[0]}` : address).toLowerCase();
  const reporter = new AttemptReporter({ attempts, now, lab, conversations, logger });
  const servers: SMTPServer[] = [];
  const rules = lab && new RuleSteps({ lab, reporter, conversations, holds, servers: () => servers, logger });
  const delivery = lab?.deliveryBeside?.(store);
  const data = new DataIntake({ store, maxMessageBytes, reporter, conversations, rules, delivery, mailboxOf, now, logger });

  /** The intake's steps: every listener is made from these. */
  const steps: SMTPServerOptions = {
    ...PROTOCOL,
    size: maxMessageBytes,
    maxClients: maxConnections,
    socketTimeout: idleTimeout,

    // Answered in the same tick (the stock hook defers with setImmediate): with
    // the greeting sent at once (adaptConnections), the 220 is written before a
    // byte from the client is read, so no client is ever told it talks too soon.
    onConnect(session, callback) {
      conversations.opened(session, now());
      callback();
    },
    // A transaction's recipients whose fate no reply decided (the client
    // went away after RCPT TO, or in the middle of DATA) are dropped.
    onClose(session) {
      const unsettled = conversations.closed(session);
      if (!unsettled) return;
      const { stage, text, rule } = unsettled;
      for (const rcpt of session.envelope.rcptTo) reporter.attempted(session, mailboxOf(rcpt.address), stage, undefined, text, { rule });
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
      // smtp-server has no such option: it can require STARTTLS before AUTH only.
      if (tls?.required && !session.secure) return void setImmediate(() => callback(smtpError(530, STARTTLS_FIRST)));
      conversations.transactionBegan(session, now);
      setImmediate(callback);
    },
    onRcptTo(address: SMTPServerAddress, session, reply) {
      // A refusal is logged as an attempt: it goes out once the log holds it (afterLog).
      const cap = conversations.get(session)?.recipients;
      const callback = (error?: Error) => {
        if (!error) cap?.accepted(address.address);
        setImmediate(() => (error ? reporter.afterLog(() => reply(error)) : reply()));
      };
      // RFC 5321 requires the domainless postmaster to be accepted.
      const given = mailboxOf(address.address);
      const overCap = cap?.refusal(address.address);
      if (overCap) return callback(reporter.refuse(session, given, 'rcpt', 452, overCap));
      const parsed = isMalformedRecipient(address) ? undefined : parseMailboxAddress(given);
      if (!parsed) return callback(reporter.refuse(session, given, 'rcpt', 553, `5.1.3 Malformed recipient address <${address.address}>`));
      if (!catchAll && !served.has(parsed.domain)) {
        return callback(reporter.refuse(session, given, 'rcpt', 550, `5.1.2 Domain ${parsed.domain} is not served here (served: ${domains.join(', ')})`));
      }
      if (rules) return rules.rcpt(session, given, callback);
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      data.receive(stream, session, callback);
    },
  };
  const openConnections = () => servers.reduce((open, each) => open + each.connections.size, 0);
  /** A listener made from the steps; `listener` says how it speaks TLS. smtp-server changes the options it is given, so each gets its own. */
  const makeListener = (listener: SMTPServerOptions): SMTPServer => {
    const made = new SMTPServer({ ...steps, ...listener });
    adaptConnections(made, { sizeReply: (declared) => tooBig(declared, maxMessageBytes).message, openConnections });
    servers.push(made);
    return made;
  };

  const certificate = tls && { key: tls.certificate.key, cert: tls.certificate.cert };
  const server = makeListener(tls?.starttls ? { ...certificate, disabledCommands: [] } : {});
  const secureServer = tls?.implicit ? makeListener({ ...certificate, secure: true }) : undefined;
  const sockets = new Set<Socket>();
  for (const each of servers) watchConnections(each, sockets, logger);
  return {
    server,
    secureServer,
    certificate: tls?.certificate.cert,
    destroyConnections() {
      holds.clear();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
