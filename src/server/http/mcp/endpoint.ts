// `POST /mcp`: the MCP endpoint, with the official SDK's streamable HTTP
// transport in stateless mode - a fresh McpServer and transport per request,
// no sessions - so any request stands on its own.
//
// The contract's own example is a bare curl call: `Content-Type:
// application/json`, curl's default `Accept: */*`, and `tools/call` with no
// `initialize` before it. docs/CONTRACT.md ("MCP endpoint") promises it a plain
// JSON answer. The SDK's transport insists on `Accept: application/json,
// text/event-stream` (406 otherwise), so the request is rebuilt here with
// that Accept header, and the answer's form is chosen from what the client
// really accepts: an event stream only when it named `text/event-stream`
// (the SDK's own clients do), plain JSON (`enableJsonResponse`) otherwise.
// Stateless mode (`sessionIdGenerator: undefined`) is what lets a call come
// without `initialize`: the transport then checks no session, and the
// server's request handlers do not require one.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { MCP_PATH } from '../../../contract/routes.js';
import type { MailTools } from '../../../mcp/tools.js';
import { BODY_LIMITS, readBodyUpTo } from '../edge/body.js';
import type { Logger } from '../../base/log.js';
import type { SdkRebindingOptions } from './dns-rebinding.js';

const MAX_BODY_BYTES = BODY_LIMITS.mcp;

export interface McpEndpointOptions {
  readonly tools: MailTools;
  readonly domains: readonly string[];
  readonly logger: Logger;
  /** The SDK's DNS-rebinding protection for a request naming `host` (dns-rebinding.ts). */
  readonly rebinding?: (host: string | undefined) => SdkRebindingOptions;
}

export interface McpEndpoint {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Cancels every call in progress (their waits end and free their slots). */
  close(): void;
}

/**
 * The MCP SDK and the tools' schemas, loaded by the first call to /mcp
 * rather than with the server: they are over 400 modules (the SDK, zod,
 * zod-to-json-schema, ajv), most of what `mailroom serve` loaded to start,
 * and most servers under test never see an MCP call.
 */
let sdk:
  Promise<readonly [typeof import('../../../mcp/mcp-server.js'), typeof import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]> | undefined;
const loadSdk = () => (sdk ??= Promise.all([import('../../../mcp/mcp-server.js'), import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')]));

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  if (res.headersSent || res.destroyed) return;
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const open = new Set<() => void>();

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBodyUpTo(req, MAX_BODY_BYTES);
    if (body === undefined) return jsonRpcError(res, 413, -32600, `Request body over ${MAX_BODY_BYTES} bytes`);

    const accept = req.headers.accept ?? '';
    const wantsStream = /\btext\/event-stream\b/i.test(accept);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // See the top of this file: the transport demands both types; what the
    // client gets is decided by `enableJsonResponse` below.
    headers.set('accept', 'application/json, text/event-stream');
    // The URL's host is not read (the SDK checks the Host header); a fixed one cannot fail to parse.
    const request = new Request(`http://localhost${req.url ?? MCP_PATH}`, {
      method: 'POST',
      headers,
      body: new Uint8Array(body),
    });

    const [{ createMcpServer }, { WebStandardStreamableHTTPServerTransport }] = await loadSdk();
    const server = createMcpServer(options.tools, { domains: options.domains });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: !wantsStream,
      ...options.rebinding?.(req.headers.host),
    });
    transport.onerror = (error) => options.logger.info(`mailroom: MCP request refused: ${error.message}`);
    let closed = false;
    const shutdown = () => {
      if (closed) return;
      closed = true;
      open.delete(shutdown);
      // Closing aborts the handlers still running: a held wait ends and frees its slot.
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    };
    open.add(shutdown);
    res.once('close', shutdown);

    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (res.destroyed) return shutdown();
    const out: Record<string, string> = { 'cache-control': 'no-store' };
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    if (!response.body) {
      res.writeHead(response.status, out);
      res.end();
      return shutdown();
    }
    if (!wantsStream || !(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const bytes = Buffer.from(await response.arrayBuffer());
      out['content-length'] = String(bytes.length);
      res.writeHead(response.status, out);
      res.end(bytes);
      return shutdown();
    }
    res.writeHead(response.status, out);
    res.flushHeaders();
    const stream = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    stream.on('error', () => res.destroy());
    stream.pipe(res);
    stream.on('end', shutdown);
  }

  return {
    handle(req, res) {
      serve(req, res).catch((error: unknown) => {
        options.logger.error(`mailroom: MCP handler failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        jsonRpcError(res, 500, -32603, 'The server failed to answer; this is a bug in mailroom, the log has the details');
      });
    },
    close() {
      for (const shutdown of [...open]) shutdown();
    },
  };
}
