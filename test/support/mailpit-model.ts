// A faithful local model of Mailpit's API (1.2x), for the Mailpit driver's
// tests on a machine where Mailpit cannot run. Each behaviour the driver
// relies on is modelled as Mailpit's source has it, with the file it comes
// from (github.com/axllent/mailpit, read at commit 408b30d):
//
// - SMTP intake: envelope recipients missing from the To/Cc/Bcc headers are
//   added to a Bcc header (internal/smtpd/main.go, "add missing email
//   addresses to Bcc (eg: Laravel doesn't include these in the headers)").
// - Ids are random, `Created` is the arrival time (internal/storage/messages.go `Store`).
// - `GET /api/v1/search?query=&start=&limit=`: an empty query is a 400
//   "Error: no search query"; `limit` defaults to 50 (server/apiv1/api.go
//   `getStartLimit`); newest first by Created (internal/storage/search.go
//   `Search`, "ORDER BY Created DESC"). `addressed:X` is `LIKE '%X%'` over the
//   JSON of To, From, Cc, Bcc and ReplyTo (search.go `searchQueryBuilder`),
//   SQLite's LIKE being case-insensitive for ASCII: a substring match.
// - `GET /api/v1/message/{ID}` marks the message read (messages.go
//   `GetMessage` -> `MarkRead`); it, `/headers` and `/raw` answer 404 "404
//   page not found" as text/plain when the id is unknown (server/apiv1/api.go `fourOFour`).
// - `DELETE /api/v1/messages`: a body that does not decode, or `IDs` empty
//   or missing, deletes EVERY message; otherwise the listed ids that exist
//   go, unknown ones are ignored; the answer is "ok" either way
//   (server/apiv1/messages.go `DeleteMessages`, storage `DeleteMessages`).
// - `GET /api/events`: a WebSocket of `{"Type", "Data"}` frames; a stored
//   message is broadcast as `{"Type": "new", "Data": summary}` and a deletion as
//   `{"Type": "delete", "Data": {"ID"}}` (server/websockets/hub.go
//   `Broadcast`; storage/messages.go `websockets.Broadcast("new", c)`).
// - Basic auth (--ui-auth-file) guards every route above, the event stream
//   included, with 401 "Unauthorized.\n" and `WWW-Authenticate: Basic
//   realm="Login"` (server/server.go `middleWareFunc`, `basicAuthResponse`;
//   server/websockets/client.go); `GET /livez` is open and answers 200 with
//   no body (server/handlers/k8healthz.go).
// The model speaks just enough WebSocket (RFC 6455) to push text frames.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import PostalMime from 'postal-mime';
import { SMTPServer } from 'smtp-server';

interface Addr {
  Name: string;
  Address: string;
}

interface StoredMessage {
  ID: string;
  Created: number;
  Read: boolean;
  raw: string;
  MessageID: string;
  From: Addr | null;
  To: Addr[];
  Cc: Addr[];
  Bcc: Addr[];
  ReplyTo: Addr[];
  Subject: string;
  Date: string | null;
  Text: string;
  HTML: string;
  headers: Record<string, string[]>;
}

export interface ModelRequest {
  readonly method: string;
  readonly path: string;
  readonly body: string;
  /** performance.now() when it arrived. */
  readonly at: number;
}

export interface MailpitModel {
  readonly apiURL: string;
  readonly smtpPort: number;
  /** Every API request, in order: what the driver asked. */
  readonly requests: ModelRequest[];
  /** How many messages are stored, whoever they are for. */
  count(): number;
  stop(): Promise<void>;
}

const BASE57 = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Mailpit's ids are shortuuid strings: 22 random base57 characters. */
function shortId(): string {
  return [...randomBytes(22)].map((b) => BASE57[b % BASE57.length]).join('');
}

function addrs(list: readonly { name?: string; address?: string }[] | undefined): Addr[] {
  return (list ?? []).filter((a) => a.address).map((a) => ({ Name: a.name ?? '', Address: a.address! }));
}

export async function startMailpitModel(options: { auth?: { username: string; password: string } } = {}): Promise<MailpitModel> {
  const messages = new Map<string, StoredMessage>();
  const requests: ModelRequest[] = [];
  const sockets = new Set<Socket>();

  const broadcast = (type: string, data: unknown) => {
    const payload = Buffer.from(JSON.stringify({ Type: type, Data: data }));
    const header = payload.length < 126 ? Buffer.from([0x81, payload.length]) : Buffer.from([0x81, 126, payload.length >> 8, payload.length & 0xff]);
    for (const socket of sockets) socket.write(Buffer.concat([header, payload]));
  };

  const summary = (m: StoredMessage) => ({
    ID: m.ID,
    MessageID: m.MessageID,
    Read: m.Read,
    From: m.From,
    To: m.To,
    Cc: m.Cc,
    Bcc: m.Bcc,
    ReplyTo: m.ReplyTo,
    Subject: m.Subject,
    Created: new Date(m.Created).toISOString(),
    Username: '',
    Tags: [],
    Size: Buffer.byteLength(m.raw),
    Attachments: 0,
    Snippet: m.Text.replace(/\s+/g, ' ').trim().slice(0, 250),
  });

  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        void (async () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const parsed = await PostalMime.parse(raw);
          const inHeaders = new Set([...(parsed.to ?? []), ...(parsed.cc ?? []), ...(parsed.bcc ?? [])].map((a) => (a.address ?? '').toLowerCase()));
          const missing = session.envelope.rcptTo.map((r) => r.address).filter((a) => !inHeaders.has(a.toLowerCase()));
          const headers: Record<string, string[]> = {};
          for (const h of parsed.headers) (headers[h.originalKey ?? h.key] ??= []).push(h.value);
          const bcc = [...addrs(parsed.bcc), ...missing.map((a) => ({ Name: '', Address: a }))];
          if (missing.length > 0) headers.Bcc = [bcc.map((a) => a.Address).join(', ')];
          const message: StoredMessage = {
            ID: shortId(),
            Created: Date.now(),
            Read: false,
            raw,
            MessageID: (parsed.messageId ?? '').replace(/^<|>$/g, ''),
            From: parsed.from?.address ? { Name: parsed.from.name ?? '', Address: parsed.from.address } : null,
            To: addrs(parsed.to),
            Cc: addrs(parsed.cc),
            Bcc: bcc,
            ReplyTo: addrs(parsed.replyTo),
            Subject: parsed.subject ?? '',
            Date: parsed.date ? new Date(parsed.date).toISOString() : null,
            Text: parsed.text ?? '',
            HTML: parsed.html ?? '',
            headers,
          };
          messages.set(message.ID, message);
          broadcast('new', summary(message));
          callback();
        })().catch((error: unknown) => callback(error as Error));
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;

  const authorized = (req: IncomingMessage) => {
    if (!options.auth) return true;
    const expected = `Basic ${Buffer.from(`${options.auth.username}:${options.auth.password}`).toString('base64')}`;
    return req.headers.authorization === expected;
  };
  const text = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'text/plain' });
    res.end(body);
  };
  const json = (res: ServerResponse, body: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const http: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://model');
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search, body, at: performance.now() });
      if (req.method === 'GET' && url.pathname === '/livez') return text(res, 200, '');
      if (!authorized(req)) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="Login"', 'content-type': 'text/plain' });
        return res.end('Unauthorized.\n');
      }
      if (req.method === 'GET' && url.pathname === '/api/v1/search') {
        const query = (url.searchParams.get('query') ?? '').trim();
        if (query === '') return text(res, 400, 'Error: no search query');
        const start = Math.max(0, Number.parseInt(url.searchParams.get('start') ?? '0', 10) || 0);
        const limitParam = Number.parseInt(url.searchParams.get('limit') ?? '', 10);
        const limit = Number.isNaN(limitParam) || limitParam < 0 ? 50 : limitParam;
        const matched = [...messages.values()].filter((m) => matchesSearch(m, query)).sort((a, b) => b.Created - a.Created);
        const page = limit === 0 ? matched.slice(start) : matched.slice(start, start + limit);
        return json(res, {
          total: messages.size,
          unread: [...messages.values()].filter((m) => !m.Read).length,
          count: page.length,
          messages_count: matched.length,
          messages_unread: matched.filter((m) => !m.Read).length,
          start,
          tags: [],
          messages: page.map(summary),
        });
      }
      const message = /^\/api\/v1\/message\/([^/]+)(\/headers|\/raw)?$/.exec(url.pathname);
      if (req.method === 'GET' && message) {
        const m = messages.get(decodeURIComponent(message[1]!));
        if (!m) return text(res, 404, '404 page not found');
        if (message[2] === '/headers') return json(res, m.headers);
        if (message[2] === '/raw') return text(res, 200, m.raw);
        m.Read = true;
        return json(res, {
          ...summary(m),
          ReturnPath: '',
          Date: m.Date,
          Text: m.Text,
          HTML: m.HTML,
          Inline: [],
          Attachments: [],
          ListUnsubscribe: { Header: '', Links: [], Errors: '', HeaderPost: '' },
        });
      }
      if (req.method === 'DELETE' && url.pathname === '/api/v1/messages') {
        let ids: unknown;
        try {
          ids = (JSON.parse(body) as { IDs?: unknown }).IDs;
        } catch {
          ids = undefined;
        }
        // Mailpit's own rule: no IDs (or a body that does not decode) deletes everything.
        const gone = Array.isArray(ids) && ids.length > 0 ? ids.filter((id): id is string => typeof id === 'string' && messages.has(id)) : [...messages.keys()];
        for (const id of gone) {
          messages.delete(id);
          broadcast('delete', { ID: id });
        }
        return text(res, 200, 'ok');
      }
      return text(res, 404, '404 page not found');
    });
  });
  http.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    const url = new URL(req.url ?? '/', 'http://model');
    if (url.pathname !== '/api/events' || !authorized(req)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="Login"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const accept = createHash('sha1')
      .update(`${String(req.headers['sec-websocket-key'])}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    sockets.add(socket);
    socket.on('data', () => {}); // client frames (pong, close) are not read by the model
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const apiURL = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  return {
    apiURL,
    smtpPort,
    requests,
    count: () => messages.size,
    async stop() {
      for (const socket of sockets) socket.destroy();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    },
  };
}

/** The search terms the driver sends: `addressed:"X"` as search.go reads it (a LIKE over the address fields' JSON). */
function matchesSearch(m: StoredMessage, query: string): boolean {
  const term = /^addressed:"?([^"]*)"?$/i.exec(query);
  if (!term) throw new Error(`the Mailpit model only knows addressed:"X" searches, got ${query}`);
  const needle = term[1]!.toLowerCase();
  if (needle === '') return true;
  const fields = [m.To, m.From ? [m.From] : [], m.Cc, m.Bcc, m.ReplyTo].map((f) => JSON.stringify(f).toLowerCase());
  return fields.some((f) => f.includes(needle));
}
