// The per-address budget kept in Redis (redis-budget.ts): its sliding log
// lives in a Redis list that Redis itself expires on its own clock, while the
// log's times are the server's clock, which tests inject. A loaded test run
// showed the gap: a server whose process stalled more than the old expiry
// (the window plus 1 s) between two calls got its spent budget back whole,
// and a message call that should have been 429 was 404.
import { createClient } from '@redis/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RedisBudget } from '../../src/server/redis/redis-budget.js';
import { RedisConnection } from '../../src/server/redis/redis-connection.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { fakeClock, silentLogger } from './helpers.js';

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await redis?.close();
});

it('keeps a spent budget spent while its window is open on the server clock, through a stall of the server of up to a minute', async () => {
  const clock = fakeClock();
  const connection = await RedisConnection.open(redis.url(), silentLogger());
  const admin = createClient({ url: redis.url() });
  await admin.connect();
  try {
    const budget = new RedisBudget({ connection, perSecond: 10, clock, prefix: 'budget-test', name: 'message' });
    for (let i = 0; i < 10; i++) {
      clock.advance(10);
      expect(await budget.take('a@x.test')).toEqual({ allowed: true });
    }
    clock.advance(10);
    expect(await budget.take('a@x.test')).toMatchObject({ allowed: false });
    // What Redis keeps of the log, on its own clock: the window, then a minute of stall.
    const left = Number(await admin.pTTL('budget-test:budget:message:a@x.test'));
    expect(left).toBeGreaterThan(budget.windowMs + 55_000);
    // and an address gone quiet is still let go (no log lives forever)
    expect(left).toBeLessThanOrEqual(budget.windowMs + 60_000);
  } finally {
    await admin.quit();
    await connection.close();
  }
});
