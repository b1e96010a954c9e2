// The memory store's mailbox index: every mailbox holding mail, keyed by
// its newest message's id (ids sort by arrival), in a B+ tree, so a page of
// the newest mailboxes is a walk of `limit` entries from the top or from a
// cursor, and keeping it costs O(log mailboxes) per arrival or removal of a
// mailbox's newest message. The Redis store keeps the same order in its
// `P:boxes` sorted set (redis/scripts/store.lua).
import { createRequire } from 'node:module';
import type { StoredMessage } from '../base/stored-message.js';
import type { MailboxEntry, MailboxPage, MailboxQuery } from './mail-store.js';

// A CommonJS module whose class is `exports.default`: Node's ESM import and
// Vite's disagree on what a default import of it is, `require` does not.
const { default: BTree } = createRequire(import.meta.url)('sorted-btree') as typeof import('sorted-btree');

export class MailboxIndex {
  /** newest id -> mailbox key */
  readonly #byNewest = new BTree<string, string>();
  /** mailbox key -> the id it is filed under */
  readonly #filedAt = new Map<string, string>();

  get size(): number {
    return this.#filedAt.size;
  }

  /** Files `mailbox` under `newestId` (its newest live message), or drops it when it holds none. */
  file(mailbox: string, newestId: string | undefined): void {
    const old = this.#filedAt.get(mailbox);
    if (old === newestId) return;
    if (old !== undefined) this.#byNewest.delete(old);
    if (newestId === undefined) {
      this.#filedAt.delete(mailbox);
      return;
    }
    this.#byNewest.set(newestId, mailbox);
    this.#filedAt.set(mailbox, newestId);
  }

  /** The id `mailbox` is filed under, if it holds mail. */
  filedAt(mailbox: string): string | undefined {
    return this.#filedAt.get(mailbox);
  }

  /**
   * One page (MailboxQuery): walks at most `limit` entries (plus one, to know
   * whether more follow), or `window` with `contains`, from the cursor down.
   */
  page(query: MailboxQuery, window: number, describe: (mailbox: string, newestId: string) => { count: number; newest: StoredMessage }): MailboxPage {
    const { limit, contains, cursor } = query;
    const span = contains === undefined ? limit : window;
    const entries: MailboxEntry[] = [];
    let visited = 0;
    let matched = 0;
    let more = false;
    let lastVisited: string | undefined;
    const walk = cursor === undefined ? this.#byNewest.entriesReversed() : this.#byNewest.entriesReversed(cursor, undefined, true);
    for (const [newestId, mailbox] of walk) {
      if (visited === span) {
        more = true;
        break;
      }
      visited++;
      lastVisited = newestId;
      if (contains !== undefined && !mailbox.includes(contains)) continue;
      matched++;
      if (entries.length < limit) entries.push({ mailbox, ...describe(mailbox, newestId) });
    }
    const lastReturned = entries.at(-1)?.newest.id;
    if (contains === undefined) return { total: this.size, entries, next: more ? lastReturned : undefined, partial: false, visited };
    const next = matched > entries.length ? lastReturned : more ? lastVisited : undefined;
    return { total: matched, entries, next, partial: more, visited };
  }
}
