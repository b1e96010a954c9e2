// The contract suite runs once per store (vitest.config.ts): this file makes
// sure each run really talks to the store its project names, so a broken
// setup cannot pass the Redis run on the memory store.
import { describe, expect, inject, it } from 'vitest';
import { internalsOf } from '../../src/server/start-server.js';
import { call, freshAddress, listPath, sendMail, start } from './helpers.js';

describe('the contract suite', () => {
  it('runs on the store its Vitest project names, and that store holds the mail', async () => {
    const redisURL = inject('redisURL');
    const server = await start();
    const { store } = internalsOf(server);
    if (redisURL) expect(store.description).toBe(`Redis at ${redisURL}`);
    else expect(store.description).toBe('memory');
    const to = freshAddress();
    await sendMail(server, { to, subject: 'which store', text: 'x' });
    const listed = await call(server, listPath(to));
    expect(listed.json.messages.map((m: { subject: string }) => m.subject)).toEqual(['which store']);
    expect(await store.count()).toBe(1);
  });
});
