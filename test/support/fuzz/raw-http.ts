// One HTTP/1.1 exchange written byte for byte on a fresh socket, so the
// fuzzer controls everything (no client normalises the path, the method or
// the framing), and read back whole with a deadline: a hang is an outcome.
import { connect } from 'node:net';

export interface RawHttpAnswer {
  readonly kind: 'answer';
  readonly status: number;
  /** Lower-cased names; a repeated header keeps every value. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: Buffer;
}

export type RawHttpOutcome =
  | RawHttpAnswer
  /** The server closed the connection before a whole answer. */
  | { readonly kind: 'closed'; readonly received: Buffer }
  /** No whole answer within the deadline. */
  | { readonly kind: 'hang'; readonly received: Buffer };

function decodeChunked(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) return undefined;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1').split(';')[0]!, 16);
    if (Number.isNaN(size)) return undefined;
    const start = lineEnd + 2;
    if (size === 0) return Buffer.concat(parts);
    if (data.length < start + size + 2) return undefined;
    parts.push(data.subarray(start, start + size));
    at = start + size + 2;
  }
}

/** The first whole answer in `data` (after any 1xx), or undefined when more bytes are needed. */
export function parseAnswer(data: Buffer, isHead: boolean): RawHttpAnswer | undefined {
  let at = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', at);
    if (headEnd === -1) return undefined;
    const [statusLine, ...lines] = data.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1] ?? NaN);
    const headers: Record<string, string[]> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      (headers[name] ??= []).push(line.slice(colon + 1).trim());
    }
    const bodyStart = headEnd + 4;
    if (status >= 100 && status < 200) {
      at = bodyStart;
      continue;
    }
    if (isHead || status === 204 || status === 304) return { kind: 'answer', status, headers, body: Buffer.alloc(0) };
    if (headers['transfer-encoding']?.some((v) => /chunked/i.test(v))) {
      const body = decodeChunked(data.subarray(bodyStart));
      return body && { kind: 'answer', status, headers, body };
    }
    const length = headers['content-length'] ? Number(headers['content-length'][0]) : undefined;
    if (length === undefined) return undefined; // read to close
    if (data.length - bodyStart < length) return undefined;
    return { kind: 'answer', status, headers, body: data.subarray(bodyStart, bodyStart + length) };
  }
}

/** Sends `request` (the whole of it: request line, headers, body) and reads the answer. */
export function rawHttpExchange(port: number, request: Buffer, options: { timeoutMs: number; isHead: boolean }): Promise<RawHttpOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = Buffer.alloc(0);
    let settled = false;
    const socket = connect(port, '127.0.0.1');
    const finish = (outcome: RawHttpOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: 'hang', received }), options.timeoutMs);
    socket.on('error', () => {}); // a reset shows as 'closed' below
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received = Buffer.concat(chunks);
      const answer = parseAnswer(received, options.isHead);
      if (answer) finish(answer);
    });
    socket.on('close', () => {
      // an answer framed by the end of the connection
      const head = received.indexOf('\r\n\r\n');
      const answer = parseAnswer(received, options.isHead);
      if (answer) return finish(answer);
      if (head !== -1 && !/\r\n(content-length|transfer-encoding):/i.test(received.subarray(0, head).toString('latin1'))) {
        const parsed = parseAnswer(
          Buffer.concat([received.subarray(0, head), Buffer.from(`\r\ncontent-length: ${received.length - head - 4}`), received.subarray(head)]),
          options.isHead,
        );
        if (parsed) return finish(parsed);
      }
      finish({ kind: 'closed', received });
    });
    socket.write(request, () => {});
  });
}
