// The one place mailroom reaches into smtp-server's private parts. The
// package is pinned to an exact version in package.json (3.21.6);
// test/server/smtp.test.ts asserts every reply these wrap and the greeting's
// promptness, so an upgrade that changes them fails loudly instead of
// silently changing the contract or bringing the delay back.
import type { Server as NetServer, Socket } from 'node:net';
import type { SMTPServer, SMTPServerAddress, SMTPServerSession } from 'smtp-server';

/** The private members of smtp-server's SMTPConnection that mailroom adapts. */
type Connection = {
  init: () => void;
  _setListeners?: (ready: () => void) => void;
  connectionReady?: () => void;
  send?: (code: number, data: string | string[], context?: unknown) => void;
  name?: string;
  _validateMailParams?: (parsed: unknown) => { code: number; message: string } | null;
  _parseAddressCommand?: (name: string, command: unknown) => unknown;
  session?: SMTPServerSession;
  _socket?: Socket;
};

export interface ConnectionAdaptations {
  /** The reply text for a MAIL FROM whose declared SIZE= is over the limit. */
  readonly sizeReply: (declared: string) => string;
  /**
   * The connections open on every server that shares the cap (the SMTP
   * port and the implicit-TLS port take `maxClients` between them).
   */
  readonly openConnections: () => number;
}

/** Marks a recipient smtp-server could not parse, so the RCPT hook refuses it with 553 5.1.3. */
const MALFORMED = Symbol('malformed recipient');

/** The listening socket server inside smtp-server: the caller binds and closes it itself. */
export function netServerOf(server: SMTPServer): NetServer {
  return (server as unknown as { server: NetServer }).server;
}

/** True for a recipient that smtp-server could not parse at all (see `adaptConnections`). */
export function isMalformedRecipient(address: SMTPServerAddress): boolean {
  return (address as { [MALFORMED]?: boolean })[MALFORMED] === true;
}

/**
 * The socket of the connection `session` belongs to, or undefined once the
 * connection is gone. A scan of the open connections of the servers that
 * share the intake (the SMTP port, the implicit-TLS port): only the test
 * rules that drop a connection or hold a reply ask, never the path of every mail.
 */
export function socketOf(servers: readonly SMTPServer[], session: SMTPServerSession): Socket | undefined {
  for (const server of servers) {
    for (const connection of server.connections as Set<Connection>) {
      if (connection.session === session) return connection._socket;
    }
  }
  return undefined;
}

/** True while the connection of `session` can still be written to. */
export function isConnectionOpen(servers: readonly SMTPServer[], session: SMTPServerSession): boolean {
  const socket = socketOf(servers, session);
  return socket !== undefined && !socket.destroyed && socket.writable;
}

/** Closes the connection of `session` at once, without a reply (a test rule's dropped connection). */
export function dropConnection(servers: readonly SMTPServer[], session: SMTPServerSession): void {
  socketOf(servers, session)?.destroy();
}

/**
 * Adapts every connection the server accepts, as smtp-server adds it to
 * `server.connections` (synchronously, just before it calls `init()`):
 *
 * - **The greeting goes out at once.** smtp-server's `init()` holds every
 *   new connection for a fixed 100 ms before the 220, to catch clients that
 *   talk before they are greeted. Apps under test mostly open a connection
 *   per mail, so every mail of every test paid it. `greetAtOnce` does what
 *   `init()` does without the timer; with reverse lookup off and a
 *   synchronous onConnect the 220 is written in the tick the connection is
 *   accepted, before a byte from the client can be read, so early-talker
 *   detection has nothing left to catch and is gone.
 * - **Two early refusals are reworded.** They happen inside smtp-server
 *   before any hook runs, with replies the contract words differently: a
 *   declared MAIL FROM SIZE= over the limit (552 without 5.3.4) gets
 *   `sizeReply(declared)`, and a recipient it cannot parse at all, such as
 *   <no-at-sign> or <a@b@c> (501 "Bad recipient address syntax" instead of
 *   553 5.1.3), is passed on to the RCPT hook marked `isMalformedRecipient`.
 *
 * - **Every refusal carries an enhanced status code** (RFC 3463). The
 *   contract's own refusals write theirs into the text; smtp-server's (500
 *   for an unknown command, 503 out of sequence, 421 for too many bad
 *   commands or a line too long, ...) get one chosen from the reply code
 *   here. smtp-server can add them itself, but only to every reply at once,
 *   from a table that reads 550 as 5.1.1 where the contract says 5.1.2.
 *
 * A member that an upgrade renamed is left alone: the connection then
 * behaves as stock smtp-server does, and the tests that pin the replies and
 * the greeting fail.
 */
export function adaptConnections(server: SMTPServer, adaptations: ConnectionAdaptations): void {
  const connections = server.connections as Set<Connection>;
  const add = connections.add.bind(connections);
  connections.add = (connection: Connection) => {
    addEnhancedCodes(connection);
    greetAtOnce(connection, server, adaptations.openConnections);
    rewordEarlyRefusals(connection, adaptations.sizeReply);
    return add(connection);
  };
}

const ENHANCED = /^[245]\.\d{1,3}\.\d{1,3}(?: |$)/;

/** The enhanced code for a refusal smtp-server words itself, from its reply code and text. */
export function enhancedCodeFor(code: number, text: string): string {
  if (/too many (unrecognized|unauthenticated) commands/i.test(text)) return '4.7.0';
  if (/shutting down/i.test(text)) return '4.3.2';
  if (/line too long/i.test(text)) return code >= 500 ? '5.5.2' : '4.5.0';
  const byCode: Record<number, string> = {
    421: '4.4.2',
    450: '4.2.1',
    451: '4.3.0',
    452: '4.5.3',
    454: '4.7.0',
    500: '5.5.2',
    501: '5.5.4',
    502: '5.5.1',
    503: '5.5.1',
    504: '5.5.4',
    530: '5.7.0',
    535: '5.7.8',
    538: '5.7.11',
    550: '5.7.1',
    552: '5.3.4',
    553: '5.1.3',
    554: '5.6.0',
    555: '5.5.4',
  };
  return byCode[code] ?? (code >= 500 ? '5.0.0' : '4.0.0');
}

function addEnhancedCodes(connection: Connection): void {
  const send = connection.send;
  if (typeof send !== 'function') return;
  connection.send = function (this: Connection, code: number, data: string | string[], context?: unknown) {
    if (code < 400) return send.call(this, code, data, context);
    const lines = Array.isArray(data) ? data : [String(data ?? '')];
    const coded = lines.map((line) => (ENHANCED.test(line) ? line : `${enhancedCodeFor(code, lines.join(' '))} ${line}`));
    return send.call(this, code, Array.isArray(data) ? coded : coded[0]!, context);
  };
}

function greetAtOnce(connection: Connection, server: SMTPServer, openConnections: () => number): void {
  const { _setListeners: setListeners, connectionReady, send } = connection;
  if (typeof setListeners !== 'function' || typeof connectionReady !== 'function' || typeof send !== 'function') return;
  connection.init = function (this: Connection) {
    setListeners.call(this, () => {
      // The one check init() makes before its timer, kept as it words it,
      // counting the connections of every server that shares the cap.
      const { maxClients } = server.options;
      if (maxClients && openConnections() > maxClients) {
        send.call(this, 421, `4.4.5 ${this.name ?? 'mailroom'} Too many connected clients, try again in a moment`, false);
        return;
      }
      connectionReady.call(this);
    });
  };
}

function rewordEarlyRefusals(connection: Connection, sizeReply: (declared: string) => string): void {
  const validate = connection._validateMailParams;
  if (typeof validate === 'function') {
    connection._validateMailParams = function (parsed: unknown) {
      const result = validate.call(this, parsed);
      if (result && result.code === 552) {
        const declared = (parsed as { args?: Record<string, string> }).args?.SIZE ?? 'declared';
        return { ...result, message: sizeReply(declared) };
      }
      return result;
    };
  }
  const parse = connection._parseAddressCommand;
  if (typeof parse === 'function') {
    connection._parseAddressCommand = function (name: string, command: unknown) {
      const parsed = parse.call(this, name, command);
      if (name !== 'rcpt to' || (parsed !== false && (parsed as { address?: string }).address !== '')) return parsed;
      const bracketed = /^\s*RCPT\s+TO\s*:\s*<([^<>]*)>/i.exec(String(command));
      return bracketed ? { address: bracketed[1] || '<>', args: false, [MALFORMED]: true } : parsed;
    };
  }
}
