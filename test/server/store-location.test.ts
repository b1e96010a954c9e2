// The `store` option: memory by default, a Redis URL with an optional key
// prefix, and every other value refused with a message naming the option.
import { describe, expect, it } from 'vitest';
import { resolveServerOptions } from '../../src/server/server-options.js';
import { describeRedisUrl, parseStoreLocation } from '../../src/server/store/store-location.js';

describe('the store option', () => {
  it('is memory unless told otherwise', () => {
    expect(resolveServerOptions({}).store).toEqual({ kind: 'memory' });
    expect(parseStoreLocation('memory')).toEqual({ kind: 'memory' });
  });

  it('takes a Redis URL, with the key prefix from ?prefix= (default mailroom) and the rest passed on as it is', () => {
    expect(parseStoreLocation('redis://cache.internal:6380/2')).toEqual({ kind: 'redis', url: 'redis://cache.internal:6380/2', prefix: 'mailroom' });
    expect(parseStoreLocation('rediss://user:secret@cache:6379?prefix=staging')).toEqual({
      kind: 'redis',
      url: 'rediss://user:secret@cache:6379',
      prefix: 'staging',
    });
  });

  it('refuses what is not one, naming the option and the value', () => {
    for (const bad of ['redis', 'http://cache:6379', 'redis://cache:6379/16', 'redis://cache:6379/0?prefix=has space', 42]) {
      expect(() => resolveServerOptions({ store: bad as string })).toThrow(/^Expected `store` to be "memory" or a Redis URL/);
    }
  });

  it('never shows a password in what it logs', () => {
    expect(describeRedisUrl('redis://user:secret@cache:6379/0?prefix=x')).toBe('Redis at redis://user:***@cache:6379/0');
  });
});
