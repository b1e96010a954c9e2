// The mailbox index (`GET /api/v1/mailboxes`, MailStore.mailboxes) answers
// from a structure the store keeps as mail comes and goes, never from a walk
// over every mailbox: a page looks at `limit` entries (a search at its
// window), and the cursor pages on. Part of the server contract suite
// (vitest.config.ts): the `redis` project runs it on the Redis store, where
// a walk over every mailbox would block Redis for every server.
import { describe, expect, inject, it } from 'vitest';
import type { MailboxPage, MailStore } from '../../src/server/store/mail-store.js';
import { call, fakeClock, freshAddress, openTestStore, sendMail, start } from './helpers.js';

const STEPS = inject('redisURL') ? 150 : 1_000;

const addresses = (count: number, tag: (i: number) => string = () => 'box') =>
  Array.from({ length: count }, (_, i) => `${tag(i)}-${String(i).padStart(5, '0')}@index.test`);

/** Every page from the top, following `next`: the mailboxes in the order the index gives them. */
async function walkAll(store: MailStore, limit: number, contains?: string): Promise<{ pages: MailboxPage[]; seen: string[] }> {
  const pages: MailboxPage[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.mailboxes({ limit, contains, cursor });
    pages.push(page);
    cursor = page.next;
  } while (cursor !== undefined && pages.length < 10_000);
  return { pages, seen: pages.flatMap((page) => page.entries.map((entry) => entry.mailbox)) };
}

describe('the mailbox index', () => {
  it('looks at limit entries per page whether 20 or 2,000 mailboxes hold mail', async () => {
    const { store } = await openTestStore({ clock: fakeClock(), retention: 3_600_000, maxMessages: 100_000 });
    const visits: number[] = [];
    let held = 0;
    for (const count of [20, 2_000]) {
      await store.deliver(
        addresses(count - held, (i) => `n${held + i}`),
        Buffer.from('Subject: hi\r\n\r\nx\r\n'),
      );
      held = count;
      const page = await store.mailboxes({ limit: 10 });
      expect(page.total).toBe(count);
      expect(page.entries).toHaveLength(10);
      visits.push(page.visited);
    }
    // (plus a peek at the one after, not counted, to know whether a next page exists)
    expect(visits).toEqual([10, 10]);
  });

  it('searches at most its window per call, says the answer is partial, and the cursor reaches every match', async () => {
    const { store } = await openTestStore({ clock: fakeClock(), retention: 3_600_000, maxMessages: 100_000, indexSearchWindow: 50 });
    // one in ten is a shop, delivered oldest first (so the newest first walk sees shop-00299 first)
    const all = addresses(300, (i) => (i % 10 === 3 ? 'shop' : 'blog'));
    for (let i = 0; i < all.length; i += 100) await store.deliver(all.slice(i, i + 100), Buffer.from('Subject: hi\r\n\r\nx\r\n'));

    const first = await store.mailboxes({ limit: 100, contains: 'shop' });
    expect(first.visited).toBe(50);
    expect(first.partial).toBe(true);
    expect(first.total).toBe(5);
    expect(first.next).toBeDefined();

    const { pages, seen } = await walkAll(store, 100, 'shop');
    expect(seen).toEqual(all.filter((a) => a.startsWith('shop')).reverse());
    expect(Math.max(...pages.map((page) => page.visited))).toBe(50);
    expect(pages.at(-1)!.partial).toBe(false);
  });

  it('pages every mailbox once, newest arrival first, with true counts, through delivers, deletes, expiry and the cap', async () => {
    const clock = fakeClock();
    const { store } = await openTestStore({ clock, retention: 5_000, maxMessages: 40 });
    const boxes = addresses(12);
    let model: { id: string; mailbox: string; at: number }[] = [];
    let state = 11;
    const random = (n: number) => (state = (state * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let step = 0; step < STEPS; step++) {
      const roll = random(10);
      if (roll < 6) {
        const to = [...new Set([boxes[random(12)]!, boxes[random(12)]!])];
        const stored = await store.deliver(to, Buffer.from('Subject: s\r\n\r\nx\r\n'));
        model.push(...stored.map((m) => ({ id: m.id, mailbox: m.mailbox, at: clock.now() })));
        model = model.slice(-40); // the cap: the oldest go
      } else if (roll < 8 && model.length > 0) {
        // delete the newest of some mailbox: the one move the index makes backwards
        const mailbox = model[random(model.length)]!.mailbox;
        const newest = model.filter((m) => m.mailbox === mailbox).at(-1)!;
        expect(await store.delete(mailbox, newest.id)).toBe(true);
        model = model.filter((m) => m.id !== newest.id);
      } else {
        clock.advance(700);
        model = model.filter((m) => m.at > clock.now() - 5_000);
      }
      if (step % 10 !== 9) continue;
      const newest = new Map<string, { count: number; id: string }>();
      for (const m of model) newest.set(m.mailbox, { count: (newest.get(m.mailbox)?.count ?? 0) + 1, id: m.id });
      const expected = [...newest].sort((a, b) => (a[1].id > b[1].id ? -1 : 1)).map(([mailbox, { count, id }]) => [mailbox, count, id]);
      const { pages } = await walkAll(store, 3);
      expect(pages.flatMap((page) => page.entries.map((entry) => [entry.mailbox, entry.count, entry.newest.id]))).toEqual(expected);
      expect(pages[0]!.total).toBe(expected.length);
    }
  });
});

describe('GET /api/v1/mailboxes paging', () => {
  it('answers next_cursor while more follow, pages on with cursor, and refuses a cursor that is not an id', async () => {
    const server = await start();
    const [a, b, c] = [freshAddress('a'), freshAddress('b'), freshAddress('c')];
    for (const to of [a, b, c]) await sendMail(server, { to, subject: 'hi', text: 'x' });
    const first = await call(server, '/api/v1/mailboxes?limit=2');
    expect(first.json).toMatchObject({ total: 3, mailboxes: [{ address: c }, { address: b }], next_cursor: first.json.mailboxes[1].newest.id });
    const second = await call(server, `/api/v1/mailboxes?limit=2&cursor=${first.json.next_cursor}`);
    expect(second.json).toEqual({ total: 3, mailboxes: [expect.objectContaining({ address: a })] });
    const bad = await call(server, '/api/v1/mailboxes?cursor=zz');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain('`cursor` must be a message id');
  });
});
