// Answers node:http sends before any request handler runs: a request it cannot
// parse (`clientError`), an `Expect` it does not know (a bare 417 otherwise),
// and a CONNECT or protocol upgrade, which it hands over as a bare socket and,
// with nobody listening, would drop without a word. Each still gets the
// contract's JSON refusal with the usual security headers.
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SECURITY_HEADER_LINES, SECURITY_HEADERS } from './security-headers.js';

// A refused socket is no longer node:http's: closeAllConnections() does not
// see it, and, paused, it would never notice the client hang up. So it is
// read (and the bytes dropped) until the client closes, cut after a grace
// period if it does not, and cut at once when the server closes. Without this
// each such request left a socket open for good, and close() waited on it
// (found by scripts/fuzz.ts, 5,000 runs).
const GRACE_MS = 1000;

export interface SocketRefusals {
  /** Destroys every refused socket still open. */
  destroyAll(): void;
}

export function refuseWhatNoHandlerSees(http: HttpServer): SocketRefusals {
  const open = new Set<Duplex>();

  function refuse(socket: Duplex, statusLine: string, slug: string, message: string, extra = ''): void {
    socket.on('error', () => {});
    if (!socket.writable) return void socket.destroy();
    const body = JSON.stringify({ error: slug, message });
    socket.end(
      `HTTP/1.1 ${statusLine}\r\ncontent-type: application/json; charset=utf-8\r\n${SECURITY_HEADER_LINES}${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    open.add(socket);
    const cut = setTimeout(() => socket.destroy(), GRACE_MS).unref();
    socket.once('close', () => {
      clearTimeout(cut);
      open.delete(socket);
    });
    socket.once('end', () => socket.destroy());
    socket.resume();
  }

  http.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // a client too slow to send its request (slowloris): headersTimeout / requestTimeout
      return refuse(socket, '408 Request Timeout', 'request_timeout', 'The request was not received in time; the connection is closed');
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    refuse(
      socket,
      tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request',
      'invalid_request',
      tooLarge ? 'Request headers or URL too large' : `Malformed HTTP request (${error.code ?? error.message})`,
    );
  });
  http.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({
      error: 'invalid_request',
      message: `Unsupported Expect: ${JSON.stringify(req.headers.expect)}; only 100-continue is understood`,
    });
    res.writeHead(417, {
      ...SECURITY_HEADERS,
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    });
    res.end(body);
  });
  http.on('connect', (req: { method?: string; url?: string }, socket: Duplex) => {
    refuse(
      socket,
      '405 Method Not Allowed',
      'method_not_allowed',
      `${req.method} is not served here; this is an HTTP API, not a proxy`,
      'allow: GET, DELETE, POST\r\n',
    );
  });
  http.on('upgrade', (req: { headers: Record<string, unknown> }, socket: Duplex) => {
    refuse(socket, '400 Bad Request', 'invalid_request', `Protocol upgrades (${String(req.headers.upgrade)}) are not served; send plain HTTP/1.1`);
  });
  return {
    destroyAll() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}
