// A request body read whole, up to a cap. Every route that takes a body
// reads it here, under its cap below (one list, so the limits are seen
// together); each refuses a larger one in its own words.
import type { IncomingMessage } from 'node:http';

/** The most each route group reads of a request body, in bytes. */
export const BODY_LIMITS = Object.freeze({
  /** `POST /_mailroom/faults`: one fault injection. */
  testHooks: 64 * 1024,
  /** `POST /api/v1/mailbox/rules`: one rule. */
  smtpRule: 16 * 1024,
  /** `POST /api/v1/webhooks`: one registration. */
  webhook: 16 * 1024,
  /** `POST /api/v1/message/{id}/checks`: `{"links": true}`. */
  checks: 1024,
  /** `POST /mcp`: one JSON-RPC message (or batch). */
  mcp: 1024 * 1024,
});

/**
 * The body, or undefined when it grew past `maxBytes`. Past the cap the rest
 * is read and dropped, not kept: destroying the request instead would reset
 * the connection under the client before it could read the refusal (found by
 * test/server/fuzz-http.test.ts). Reading is bounded in time by the server's
 * requestTimeout, and dropped bytes cost no memory.
 */
export function readBodyUpTo(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        req.off('data', collect);
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', collect);
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
