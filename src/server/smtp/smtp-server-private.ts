// The one place mailroom reaches into smtp-server's private parts. The
// package is pinned to an exact version in package.json (3.21.6);
// test/server/smtp.test.ts asserts every reply these wrap, so an upgrade
// that changes them fails loudly instead of silently changing the contract.
import type { Server as NetServer } from 'node:net';
import type { SMTPServer, SMTPServerAddress, SMTPServerSession } from 'smtp-server';

type Connection = {
  session?: SMTPServerSession;
  _validateMailParams?: (parsed: unknown) => { code: number; message: string } | null;
  _parseAddressCommand?: (name: string, command: unknown) => unknown;
};

/** Marks a recipient smtp-server could not parse, so the RCPT hook refuses it with 553 5.1.3. */
const MALFORMED = Symbol('malformed recipient');

/** The listening socket server inside smtp-server: the caller binds and closes it itself. */
export function netServerOf(server: SMTPServer): NetServer {
  return (server as unknown as { server: NetServer }).server;
}

/** True for a recipient that smtp-server could not parse at all (see `rewordEarlyRefusals`). */
export function isMalformedRecipient(address: SMTPServerAddress): boolean {
  return (address as { [MALFORMED]?: boolean })[MALFORMED] === true;
}

/**
 * Two refusals happen inside smtp-server before any hook runs, with replies
 * the contract words differently: a declared MAIL FROM SIZE= over the limit
 * (552 without 5.3.4) and a recipient it cannot parse at all, such as
 * <no-at-sign> or <a@b@c> (501 "Bad recipient address syntax" instead of
 * 553 5.1.3). Both checks are wrapped on the session's connection: the size
 * refusal gets `sizeReply(declared)` as its text, and the unparseable
 * recipient is passed on to the RCPT hook marked `isMalformedRecipient`.
 */
export function rewordEarlyRefusals(server: SMTPServer, session: SMTPServerSession, sizeReply: (declared: string) => string): void {
  for (const connection of server.connections as Set<Connection>) {
    if (connection.session !== session) continue;
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
    return;
  }
}
