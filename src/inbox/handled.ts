// Which messages were already acted on: exactly-once across restarts.
//
// An inbox always remembers what its own waits returned. A consumer that
// outlives its process (a job draining a mailbox, an agent working through
// a backlog) also needs to remember across restarts, or a crash between
// acting and deleting acts twice. `openHandledStore` writes each handled id
// to a file before the wait returns the message, so after a restart the same
// message is skipped instead of handled again.
import { appendFileSync, closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

export interface HandledStore {
  has(address: string, id: string): boolean;
  add(address: string, id: string): void;
}

/** An in-memory store: exactly-once within one process. */
export function createHandledStore(): HandledStore {
  const keys = new Set<string>();
  return Object.freeze({
    has: (address: string, id: string) => keys.has(key(address, id)),
    add: (address: string, id: string) => void keys.add(key(address, id)),
  });
}

/**
 * A store backed by an append-only file of JSON lines `["address","id"]`.
 * Lines written by other processes are picked up on the next lookup, so
 * several consumers may share one file (appends of one short line are
 * atomic on local file systems).
 */
export function openHandledStore(path: string): HandledStore {
  if (typeof path !== 'string' || path === '') throw new TypeError('Expected `path` of the handled-id store to be a non-empty string');
  const file = resolve(path);
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, '');
  const keys = new Set<string>();
  let readBytes = 0;
  let partial = '';

  const catchUp = () => {
    const size = statSync(file).size;
    if (size <= readBytes) return;
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(size - readBytes);
      const n = readSync(fd, buffer, 0, buffer.length, readBytes);
      readBytes += n;
      const lines = (partial + buffer.subarray(0, n).toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === '') continue;
        try {
          const [address, id] = JSON.parse(line) as unknown[];
          if (typeof address === 'string' && typeof id === 'string') keys.add(key(address, id));
        } catch {
          // A torn line from a crash mid-write: that id was not handled yet.
        }
      }
    } finally {
      closeSync(fd);
    }
  };
  catchUp();

  return Object.freeze({
    has(address: string, id: string): boolean {
      if (keys.has(key(address, id))) return true;
      catchUp();
      return keys.has(key(address, id));
    },
    add(address: string, id: string): void {
      const k = key(address, id);
      if (keys.has(k)) return;
      appendFileSync(file, `${JSON.stringify([address, id])}\n`);
      keys.add(k);
    },
  });
}

function key(address: string, id: string): string {
  return `${address.toLowerCase()}\u0000${id}`;
}
