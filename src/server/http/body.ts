// A request body read whole, up to a cap: the admin routes and the MCP
// endpoint each refuse a larger one in their own words.
import type { IncomingMessage } from 'node:http';

/** The body, or undefined when it grew past `maxBytes` (the request is then destroyed). */
export function readBodyUpTo(req: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
