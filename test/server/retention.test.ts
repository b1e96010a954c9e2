// Retention and the global cap, with an injected clock: no sleeping.
import { describe, expect, it } from 'vitest';
import { call, fakeClock, freshAddress, listPath, messagePath, sendMail, silentLogger, start } from './helpers.js';

describe('retention', () => {
  it('makes a message vanish from list, fetch, raw and delete once it is older than the retention', async () => {
    const clock = fakeClock();
    const server = await start({ clock, retention: 60_000, listPerSecond: Infinity });
    const address = freshAddress();
    await sendMail(server, { to: address, subject: 'Old', text: 'x' });
    clock.advance(30_000);
    await sendMail(server, { to: address, subject: 'Young', text: 'y' });
    const [young, old] = (await call(server, listPath(address))).json.messages;
    expect([young.subject, old.subject]).toEqual(['Young', 'Old']);

    clock.advance(29_999); // Old is 59.999 s old
    expect((await call(server, messagePath(old.id, address))).status).toBe(200);
    clock.advance(1); // Old is exactly 60 s old
    expect((await call(server, listPath(address))).json.messages.map((m: { subject: string }) => m.subject)).toEqual(['Young']);
    const gone = await call(server, messagePath(old.id, address));
    expect(gone.status).toBe(404);
    expect(gone.json.error).toBe('not_found');
    expect((await call(server, messagePath(old.id, address, '/raw'))).status).toBe(404);
    expect((await call(server, messagePath(old.id, address), { method: 'DELETE' })).json).toEqual({ deleted: false });

    clock.advance(30_000);
    expect((await call(server, listPath(address))).json.messages).toEqual([]);
    expect((await call(server, listPath(address), { method: 'DELETE' })).json).toEqual({ deleted: 0 });
  });
});

describe('maxMessages', () => {
  it('evicts the oldest messages first, across mailboxes, and logs it', async () => {
    const logger = silentLogger();
    const server = await start({ maxMessages: 3, logger, listPerSecond: Infinity });
    const a = freshAddress('a');
    const b = freshAddress('b');
    for (const [to, subject] of [
      [a, 'a1'],
      [b, 'b1'],
      [a, 'a2'],
      [b, 'b2'],
      [a, 'a3'],
    ] as const) {
      await sendMail(server, { to, subject, text: subject });
    }
    const subjects = async (address: string) => (await call(server, listPath(address))).json.messages.map((m: { subject: string }) => m.subject);
    expect(await subjects(a)).toEqual(['a3', 'a2']);
    expect(await subjects(b)).toEqual(['b2']);
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings[0]).toMatch(/store full \(maxMessages 3(, maxStoreBytes \d+)?\): evicted the oldest message, [0-9a-z]{11} for a-/);
    expect(warnings.join('\n')).toContain(a);
  });

  it('summarises sustained eviction instead of logging every message', async () => {
    const clock = fakeClock();
    const logger = silentLogger();
    const server = await start({ maxMessages: 1, logger, clock });
    const address = freshAddress();
    for (let i = 0; i < 6; i++) await sendMail(server, { to: address, subject: `m${i}`, text: 'x' });
    // first eviction at once, the next four held for the summary
    expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    clock.advance(10_000);
    await sendMail(server, { to: address, subject: 'm6', text: 'x' });
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toMatch(/evicted the 5 oldest messages/);
  });
});
