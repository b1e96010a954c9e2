// Where every computed reply is written (the MCP endpoint and the event
// stream write their own), and so where an injected fault decides how, or
// whether, it reaches the wire: `slow` holds it back, `reset` cuts the
// connection halfway through the body, the body faults rewrite it
// (test-hooks/faults.ts `spoilReply`).
import type { ServerResponse } from 'node:http';
import type { Reply } from './edge/reply.js';
import { spoilReply, type Fault } from './test-hooks/faults.js';

export class ReplyWriter {
  readonly #delayed = new Set<NodeJS.Timeout>();

  write(res: ServerResponse, reply: Reply, fault?: Fault): void {
    if (res.destroyed) return;
    if (fault?.kind === 'slow') {
      const timer = setTimeout(() => {
        this.#delayed.delete(timer);
        this.write(res, reply);
      }, fault.delayMs);
      this.#delayed.add(timer);
      res.once('close', () => {
        clearTimeout(timer);
        this.#delayed.delete(timer);
      });
      return;
    }
    const { status, headers, body } = spoilReply({ ...reply, body: typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body }, fault);
    res.writeHead(status, { ...headers, 'content-length': String(body.length) });
    if (fault?.kind === 'reset') {
      // Status line, headers and part of the body reach the client, then the
      // connection dies: the work is done but the answer is lost.
      const part = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
      res.write(part, () => res.socket?.destroy());
      return;
    }
    res.end(body);
  }

  /** Cancels answers still held back by a `slow` fault. */
  close(): void {
    for (const timer of this.#delayed) clearTimeout(timer);
    this.#delayed.clear();
  }
}
