// What the store lets go of: a message the cap evicted, expired or deleted
// must become unreachable, source and all, even from a mailbox that is never
// emptied. The soak found the opposite (RSS growing 57 MB per 15 s at a
// steady 20,000 stored): each small mailbox's queue kept up to 1,024 removed
// messages before it was compacted. The garbage collector is the judge here.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { MessageStore } from '../../src/server/store/message-store.js';
import { fakeClock } from './helpers.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage after the current job, when WeakRefs made in it may be cleared. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  await new Promise((resolve) => setImmediate(resolve));
}

describe('MessageStore memory', () => {
  it('keeps no evicted message reachable while its mailbox stays busy', async () => {
    const store = new MessageStore({ clock: fakeClock(), retention: 3_600_000, maxMessages: 50 });
    const mailboxes = Array.from({ length: 10 }, (_, i) => `busy-${i}@x.test`);
    const evicted: WeakRef<Buffer>[] = [];
    for (let n = 0; n < 2_000; n++) {
      const raw = Buffer.from(`Subject: ${n}\r\n\r\n${'x'.repeat(1000)}`);
      store.deliver([mailboxes[n % mailboxes.length]!], raw);
      if (n < 1_500) evicted.push(new WeakRef(raw));
    }
    await collect();
    const reachable = evicted.filter((ref) => ref.deref() !== undefined).length;
    expect(reachable, `${reachable} of ${evicted.length} evicted sources are still reachable`).toBe(0);
    expect(store.size).toBe(50);
  });

  it('lets expired and deleted messages go too', async () => {
    const clock = fakeClock();
    const store = new MessageStore({ clock, retention: 1_000, maxMessages: 10_000 });
    const gone: WeakRef<Buffer>[] = [];
    for (let n = 0; n < 300; n++) {
      const raw = Buffer.from(`Subject: ${n}\r\n\r\nx`);
      const [message] = store.deliver(['one@x.test', 'two@x.test'], raw);
      if (n % 3 === 0) store.delete('one@x.test', message!.id);
      if (n < 200) gone.push(new WeakRef(raw));
      if (n === 199) clock.advance(1_001);
    }
    store.expire();
    await collect();
    expect(gone.filter((ref) => ref.deref() !== undefined).length).toBe(0);
    expect(store.size).toBe(200 - 33); // two copies of the last 100, less the 33 deleted
  });
});
