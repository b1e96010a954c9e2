// Issue 26, item 4: the memory store is capped in bytes (`maxStoreBytes`,
// default 256 MiB): past the cap the oldest mail is evicted first, reported
// like the count cap's evictions, and a mail to many mailboxes counts its
// source once.
import { describe, expect, it } from 'vitest';
import { PER_MESSAGE_BYTES } from '../../src/server/store/byte-budget.js';
import { MessageStore } from '../../src/server/store/message-store.js';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { call, fakeClock, freshAddress, listPath, sendRaw, start } from './helpers.js';

const KIB = 1024;

describe('the memory store’s byte cap', () => {
  it('evicts the oldest mail first once the bytes held pass maxStoreBytes, and the listing and the log say so', async () => {
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (line: string) => void warnings.push(line), error: () => {} };
    const server = await start({ maxMessageBytes: 64 * KIB, maxStoreBytes: 160 * KIB, logger, store: undefined, listPerSecond: Infinity });
    const address = freshAddress();
    const body = 'x'.repeat(50 * KIB);
    for (let i = 0; i < 4; i++) await sendRaw(server.smtpPort, 'app@example.com', [address], `Subject: m${i}\r\n\r\n${body}\r\n`);
    // 4 x (50 KiB + 1 KiB) is over 160 KiB: the first is gone, three stay.
    const listing = (await call(server, listPath(address))).json;
    expect(listing.messages.map((m: { subject: string }) => m.subject)).toEqual(['m3', 'm2', 'm1']);
    expect(listing.evicted).toMatchObject({ count: 1 });
    expect(warnings.join('\n')).toMatch(/store full \(maxMessages 100000, maxStoreBytes 163840\): evicted the oldest message/);
  });

  it('counts a mail to many mailboxes once, and gives its bytes back with its last copy', () => {
    const clock = fakeClock();
    const store = new MessageStore({ clock, retention: 60_000, maxMessages: Infinity, maxStoreBytes: 1024 * KIB });
    const raw = Buffer.alloc(100 * KIB, 'a');
    const copies = store.deliver(['a@mailroom.test', 'b@mailroom.test', 'c@mailroom.test'], raw);
    expect(store.bytesHeld).toBe(raw.length + 3 * PER_MESSAGE_BYTES);
    store.delete('a@mailroom.test', copies[0]!.id);
    store.delete('b@mailroom.test', copies[1]!.id);
    expect(store.bytesHeld).toBe(raw.length + PER_MESSAGE_BYTES);
    clock.advance(60_001);
    store.expire();
    expect(store.bytesHeld).toBe(0);
  });

  it('holds 100,000 small mails in the bytes of their sources plus 1 KiB each, evicting past the cap', () => {
    const store = new MessageStore({ clock: fakeClock(), retention: 3_600_000, maxMessages: Infinity, maxStoreBytes: 50_000 * (200 + PER_MESSAGE_BYTES) });
    for (let i = 0; i < 100_000; i++) store.deliver([`u${i % 100}@mailroom.test`], Buffer.alloc(200, 'a'));
    expect(store.size).toBe(50_000);
    expect(store.bytesHeld).toBe(50_000 * (200 + PER_MESSAGE_BYTES));
  });

  it('defaults to 256 MiB, never below maxMessageBytes, and refuses a cap that could not hold one mail', () => {
    expect(resolveServerOptions({}).maxStoreBytes).toBe(256 * 1024 * KIB);
    expect(resolveServerOptions({ maxMessageBytes: 512 * 1024 * KIB }).maxStoreBytes).toBe(512 * 1024 * KIB);
    expect(() => resolveServerOptions({ maxMessageBytes: 64 * KIB, maxStoreBytes: 32 * KIB })).toThrow(/maxStoreBytes.*at least maxMessageBytes \(65536\)/);
    expect(resolveServerOptions({ maxStoreBytes: Infinity }).maxStoreBytes).toBe(Infinity);
  });
});
