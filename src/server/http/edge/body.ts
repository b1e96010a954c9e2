// A request body read whole, up to a cap: the admin routes and the MCP
// endpoint each refuse a larger one in their own words.
import type { IncomingMessage } from 'node:http';

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
