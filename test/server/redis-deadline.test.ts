// A Redis that takes commands and answers none (here: its writes paused)
// must not hang a request: each command has a deadline (redis-connection.ts),
// past which it is answered `503 unavailable` like a lost connection, and
// the connection goes on answering once Redis does again. A real
// redis-server of its own (a pause would stall the other files' Redis).
import { createClient } from '@redis/client';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { RedisMailStore } from '../../src/server/redis/redis-store.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { silentLogger } from './helpers.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.close();
});

/** A Redis store on this file's own redis-server, on the real clock. */
const openStore = (options: { commandTimeoutMs?: number } = {}) =>
  RedisMailStore.open({ url: redis.url(), clock: { now: () => Date.now() }, retention: 60_000, maxMessages: Infinity, logger: silentLogger(), ...options });

it('answers a command Redis leaves unanswered as unavailable at its deadline, and the next one as usual once Redis answers again', async () => {
  const store = await openStore({
    // Long enough for the calls Redis does answer on a loaded machine (200 ms
    // was not: a first count, under stress-ng, missed it), short enough to wait out.
    commandTimeoutMs: 2_000,
  });
  const admin = createClient({ url: redis.url() });
  await admin.connect();
  try {
    expect(await store.count()).toBe(0);
    // scripts count as writes: the store's next call waits in Redis (the admin's own commands still run)
    await admin.sendCommand(['CLIENT', 'PAUSE', '30000', 'WRITE']);
    await expect(store.count()).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/cannot be reached: no reply within 2000 ms/) as unknown });
    await admin.sendCommand(['CLIENT', 'UNPAUSE']);
    // the late reply to the first call is dropped, not taken for the next one's
    await store.deliver(['after@x.test'], Buffer.from('Subject: after\r\n\r\nx\r\n'));
    expect(await store.count()).toBe(1);
  } finally {
    await admin.sendCommand(['CLIENT', 'UNPAUSE']).catch(() => {});
    await admin.close();
    await store.close();
  }
});

it('gives a command one deadline, its own: no AbortSignal.timeout of node-redis beside it, whose timer would fire seconds later for every command', async () => {
  const store = await openStore();
  const timeouts = vi.spyOn(AbortSignal, 'timeout');
  try {
    await store.deliver(['one@x.test'], Buffer.from('Subject: one\r\n\r\nx\r\n'));
    expect(await store.count()).toBeGreaterThanOrEqual(1);
    expect(timeouts).not.toHaveBeenCalled();
  } finally {
    timeouts.mockRestore();
    await store.close();
  }
});
