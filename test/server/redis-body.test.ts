// How the Redis store keeps a message's body (scripts/store.lua): one string,
// a head with the lengths of the envelope sender and the summary, then both,
// then the source; a count of copies only while more than one mailbox holds
// it. Read on a second replica, so the body comes from Redis, not from the
// delivering server's cache; and bodies kept as hashes by servers from before
// still read and go.
import { createClient } from '@redis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisMailStore } from '../../src/server/redis/redis-store.js';
import { encodeSummary } from '../../src/server/redis/summary-record.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { silentLogger } from './helpers.js';

let redis: RedisServer;
let admin: ReturnType<typeof createClient>;
beforeAll(async () => {
  redis = await startRedisServer();
  admin = createClient({ url: redis.url() });
  await admin.connect();
});
afterAll(async () => {
  await admin?.close();
  await redis?.close();
});

let prefixes = 0;
/** Two replicas on one fresh prefix: `a` delivers, `b` reads what Redis holds. */
async function replicas() {
  const prefix = `body-test-${++prefixes}`;
  const open = () =>
    RedisMailStore.open({ url: redis.url(), prefix, clock: { now: () => Date.now() }, retention: 600_000, maxMessages: Infinity, logger: silentLogger() });
  const [a, b] = [await open(), await open()];
  const keys = async (kind: string) => (await admin.keys(`${prefix}:${kind}:*`)).sort();
  return { prefix, a, b, keys, close: () => Promise.all([a.close(), b.close()]) };
}

// A subject of 600 characters, some of them two bytes long: the summary runs past the first read of a body's head (512 bytes).
const SUBJECT = 'Reçu '.repeat(120).trim();
const SOURCE = Buffer.from(`From: Acme <noreply@acme.example>\r\nSubject: ${SUBJECT}\r\n\r\nYour receipt: 42 €.\r\n`);

it('keeps a body as one string with its copies counted, reads it back whole on another replica, and removes it with its last copy', async () => {
  const { prefix, a, b, keys, close } = await replicas();
  try {
    await a.deliver(['one@x.test', 'two@x.test'], SOURCE, 'bounce+ü@acme.example');
    const [body] = await keys('b');
    expect(await admin.type(body!)).toBe('string');
    const bodyId = body!.slice(`${prefix}:b:`.length);
    expect(await admin.get(`${prefix}:r:${bodyId}`)).toBe('2');

    const [listed] = await b.list('one@x.test', 10);
    expect(await listed!.content.summary()).toMatchObject({ subject: SUBJECT, from: 'Acme <noreply@acme.example>', to: [] });
    expect(listed!.content.envelopeFrom).toBe('bounce+ü@acme.example');
    const got = await b.get('one@x.test', listed!.id);
    expect((await got!.content.source()).equals(SOURCE)).toBe(true);
    expect(got!.size).toBe(SOURCE.length);

    expect(await b.delete('one@x.test', listed!.id)).toBe(true);
    expect(await keys('b')).toEqual([body]);
    expect(await admin.get(`${prefix}:r:${bodyId}`)).toBe('1');
    const [other] = await b.list('two@x.test', 10);
    expect((await (await b.get('two@x.test', other!.id))!.content.source()).equals(SOURCE)).toBe(true);

    expect(await b.deleteMailbox('two@x.test')).toBe(1);
    expect(await keys('b')).toEqual([]);
    expect(await keys('r')).toEqual([]);
  } finally {
    await close();
  }
});

it('keeps no count for a body only one mailbox holds, and removes the body with that copy', async () => {
  const { a, b, keys, close } = await replicas();
  try {
    const [stored] = await a.deliver(['solo@x.test'], SOURCE, '');
    expect(await keys('b')).toHaveLength(1);
    expect(await keys('r')).toEqual([]);
    expect((await (await b.get('solo@x.test', stored!.id))!.content.source()).equals(SOURCE)).toBe(true);
    expect(await b.delete('solo@x.test', stored!.id)).toBe(true);
    expect(await keys('b')).toEqual([]);
  } finally {
    await close();
  }
});

it('reads and removes a body a server from before kept as a hash (raw, from, summary, refs)', async () => {
  const { prefix, a, b, keys, close } = await replicas();
  try {
    const stored = await a.deliver(['one@x.test', 'two@x.test'], SOURCE, 'old@acme.example');
    // What that server wrote: the body a hash under an unmarked id, each copy pointing at it.
    const [packed] = await keys('b');
    const oldBody = `${prefix}:b:0old`;
    const summary = encodeSummary(await stored[0]!.content.summary());
    await admin.hSet(oldBody, { raw: SOURCE.toString(), from: 'old@acme.example', summary, refs: '2' });
    for (const { id } of stored) await admin.hSet(`${prefix}:m:${id}`, 'body', '0old');
    await admin.del([packed!, `${prefix}:r:${packed!.slice(`${prefix}:b:`.length)}`]);

    const [listed] = await b.list('one@x.test', 10);
    expect(await listed!.content.summary()).toMatchObject({ subject: SUBJECT });
    expect(listed!.content.envelopeFrom).toBe('old@acme.example');
    expect((await (await b.get('one@x.test', listed!.id))!.content.source()).equals(SOURCE)).toBe(true);
    expect(await b.deleteMailbox('one@x.test')).toBe(1);
    expect(await admin.hGet(oldBody, 'refs')).toBe('1');
    expect(await b.deleteMailbox('two@x.test')).toBe(1);
    expect(await keys('b')).toEqual([]);
  } finally {
    await close();
  }
});
