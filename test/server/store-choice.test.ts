// The contract suite runs once per store (vitest.config.ts): this file makes
// sure each run really talks to the store its project names, so a broken
// setup cannot pass the Redis run on the memory store - the mail, and the
// SMTP deferral lab's rules and attempt log beside it.
import { describe, expect, inject, it } from 'vitest';
import { internalsOf } from '../../src/server/start-server.js';
import { call, freshAddress, listPath, sendMail, start, testStore } from './helpers.js';

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

  it('keeps the SMTP rules and the attempt log on that store: shared by two servers on one Redis, per server in memory', async () => {
    const redisURL = inject('redisURL');
    const store = testStore();
    const [one, two] = [await start({ store }), await start({ store })];
    expect(internalsOf(one).smtpLab?.lab.description).toBe(redisURL ? `Redis at ${redisURL}` : 'memory');
    const to = freshAddress('lab');
    const rules = `/api/v1/mailbox/rules?${new URLSearchParams({ address: to })}`;
    const set = await call(one, rules, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"kind": "reject", "stage": "rcpt"}' });
    expect(set.status).toBe(200);
    expect((await call(two, rules)).json.rules).toHaveLength(redisURL ? 1 : 0);
    const sent = await sendMail(two, { to, subject: 'ruled elsewhere', text: 'x' }).catch((error: { responseCode?: number }) => error.responseCode);
    if (redisURL) expect(sent).toBe(550);
    else expect(sent).toMatch(/^250 /);
    const attempts = await call(one, `/api/v1/mailbox/attempts?${new URLSearchParams({ address: to })}`);
    expect(attempts.json.attempts.map((a: { outcome: string }) => a.outcome)).toEqual(redisURL ? ['rejected'] : []);
  });
});
