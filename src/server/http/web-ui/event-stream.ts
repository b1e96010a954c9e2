// `GET /api/v1/events` (an embedded-server extension for the web UI): every
// arrival and removal as server-sent events, so a person's view updates the
// moment mail lands instead of on the next poll. With `address=A` only that
// mailbox's. Each event names the mailbox and the message id, and an
// arrival carries the message's summary (as the list shows it), so a person
// watching a mailbox spends none of the budget of the test waiting on it.
//
// A browser's EventSource cannot send an Authorization header, so the UI
// reads this stream with fetch() (streaming the body), and the token stays
// out of URLs (and so out of logs and history). Any client that can send a
// header can read it the same way.
import type { ServerResponse } from 'node:http';
import { Refusal } from '../../../contract/refusal.js';
import type { WireMailEvent } from '../../../contract/wire.js';
import type { MailboxReader } from '../../store/mailbox-reader.js';
import type { MailStore } from '../../store/mail-store.js';
import { singleParam } from '../edge/params.js';

/** Streams open at once, in the whole server: a UI tab holds one. */
export const MAX_EVENT_STREAMS = 64;

/** A reader this far behind (bytes written, not yet taken) is cut off: it reconnects and lists again. */
export const MAX_UNREAD_BYTES = 1024 * 1024;

/** A comment line this often keeps proxies and idle timers from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;

export interface EventStreams {
  /** Answers the request with the stream (or throws the refusal before anything is written). */
  open(params: URLSearchParams, res: ServerResponse): void;
  /** Ends every open stream (server shutdown). */
  closeAll(): void;
  readonly openCount: number;
}

export function createEventStreams(store: MailStore, reader: MailboxReader): EventStreams {
  const open = new Set<ServerResponse>();

  return {
    get openCount() {
      return open.size;
    },
    open(params, res) {
      const address = singleParam(params, 'address');
      const only = address === undefined ? undefined : reader.mailboxKey(address, 'address');
      if (open.size >= MAX_EVENT_STREAMS) {
        throw new Refusal(503, 'unavailable', `Too many event streams open (${MAX_EVENT_STREAMS}); close one, or poll GET /api/v1/mailbox instead`, {
          'retry-after': '5',
        });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
      // `retry`: how long a reconnecting EventSource waits; the comment flushes the headers at once.
      res.write('retry: 2000\n: connected\n\n');
      open.add(res);
      // Written in the order the store told them, though a summary may need a parse first.
      let written: Promise<unknown> = Promise.resolve();
      const unwatch = store.watch(({ type, message }) => {
        if (only !== undefined && message.mailbox !== only) return;
        const summary = type === 'arrived' ? reader.wireSummary(message) : undefined;
        written = written.then(async () => {
          const event: WireMailEvent = { type, address: message.mailbox, id: message.id, ...(summary ? { summary: await summary } : {}) };
          // Gone, or ended by closeAll() while the summary was parsed: a write after end would be an error the server cannot catch.
          if (res.destroyed || res.writableEnded) return;
          res.write(`event: ${type}\ndata: ${JSON.stringify(event)}\n\n`);
          // A stalled reader must not hold the server's memory hostage.
          if (res.writableLength > MAX_UNREAD_BYTES) res.destroy();
        });
        written = written.catch(() => undefined);
      });
      const heartbeat = setInterval(() => {
        if (!res.destroyed && !res.writableEnded) res.write(': still here\n\n');
      }, HEARTBEAT_MS);
      heartbeat.unref();
      res.once('close', () => {
        open.delete(res);
        unwatch();
        clearInterval(heartbeat);
      });
    },
    closeAll() {
      for (const res of [...open]) res.end();
    },
  };
}
