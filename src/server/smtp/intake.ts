// SMTP intake: smtp-server speaks the protocol, this file decides what to accept.
//
// What intake must know is only the envelope, the size and the bytes. Parsing
// the MIME structure waits for the first read (store/mime-parse.ts), which is what
// keeps intake close to the rate of a server that discards everything.
import type { Socket } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { parseMailboxAddress } from '../../contract/address.js';
import type { Logger } from '../log.js';
import { adaptConnections, isMalformedRecipient, netServerOf } from './smtp-server-private.js';
import type { MessageStore } from '../store/message-store.js';
import { outcomeOfCode, splitEnhanced, type AttemptFeed, type AttemptStage } from './attempts.js';

export interface SmtpIntakeOptions {
  readonly domains: readonly string[];
  readonly maxMessageBytes: number;
  /** Open connections taken; one more gets `421 4.4.5` (smtp-server-private.ts). */
  readonly maxConnections: number;
  /** Silence (ms) after which a connection is closed with `421 4.4.2`. */
  readonly idleTimeout: number;
  readonly store: MessageStore;
  /** Told every reply that decided a recipient's fate (attempts.ts). */
  readonly attempts: AttemptFeed;
  /** Wall-clock ms, for the attempts' times. */
  readonly now: () => number;
  readonly logger: Logger;
}

export interface SmtpIntake {
  readonly server: SMTPServer;
  /** Destroys every open SMTP connection (used by close()). */
  destroyConnections(): void;
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
  const { domains, maxMessageBytes, maxConnections, idleTimeout, store, attempts, now, logger } = options;
  const served = new Set(domains);
  const sockets = new Set<Socket>();
  const mailboxOf = (address: string) => (address.toLowerCase() === 'postmaster' ? `postmaster@${domains[0]}` : address).toLowerCase();

  /** Publishes the reply `code` + `reply` ("x.y.z text") given to `to` at `stage`. */
  const attempted = (session: SMTPServerSession, to: string, stage: AttemptStage, code: number, reply: string, messageId?: string) => {
    const mailFrom = session.envelope.mailFrom;
    attempts.publish({
      at: now(),
      clientIp: session.remoteAddress,
      from: mailFrom ? mailFrom.address : '',
      to,
      stage,
      code,
      ...splitEnhanced(reply),
      outcome: outcomeOfCode(code),
      messageId,
    });
  };
  const refuse = (session: SMTPServerSession, to: string, stage: AttemptStage, code: number, reply: string): Error => {
    attempted(session, to, stage, code, reply);
    return smtpError(code, reply);
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
    onConnect(_session, callback) {
      callback();
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
    onMailFrom(_address, _session, callback) {
      setImmediate(callback);
    },
    onRcptTo(address: SMTPServerAddress, session, reply) {
      const callback = (error?: Error) => void setImmediate(() => reply(error));
      // RFC 5321 requires the domainless postmaster to be accepted.
      const given = mailboxOf(address.address);
      const parsed = isMalformedRecipient(address) ? undefined : parseMailboxAddress(given);
      if (!parsed) return callback(refuse(session, given, 'rcpt', 553, `5.1.3 Malformed recipient address <${address.address}>`));
      if (!served.has(parsed.domain)) {
        return callback(refuse(session, given, 'rcpt', 550, `5.1.2 Domain ${parsed.domain} is not served here (served: ${domains.join(', ')})`));
      }
      callback();
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!stream.sizeExceeded) chunks.push(chunk);
      });
      stream.once('end', () => {
        const mailboxes = session.envelope.rcptTo.map((rcpt) => mailboxOf(rcpt.address));
        const refuseAll = (code: number, reply: string) => {
          for (const mailbox of mailboxes) attempted(session, mailbox, 'data', code, reply);
          return callback(smtpError(code, reply));
        };
        if (stream.sizeExceeded) return refuseAll(552, tooBig(bytes, maxMessageBytes).message);
        const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
        const mailFrom = session.envelope.mailFrom;
        let stored;
        try {
          stored = store.deliver(mailboxes, raw, mailFrom ? mailFrom.address : '');
        } catch (error) {
          logger.error(`mailroom: could not store a message for ${mailboxes.join(', ')}: ${String(error)}`);
          return refuseAll(451, '4.3.0 Could not store the message, try again');
        }
        const first = stored[0];
        const reply = stored.length === 1 && first ? `2.6.0 Stored as ${first.id} for ${first.mailbox}` : `2.6.0 Stored for ${stored.length} mailboxes`;
        for (const message of stored) attempted(session, message.mailbox, 'data', 250, reply, message.id);
        callback(null, reply);
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
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
  };
}
