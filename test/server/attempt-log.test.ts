// The attempt log's bounds on their own: retention, the cap per address, the
// cap on the whole log, and a delete followed by new attempts.
import { describe, expect, it } from 'vitest';
import { AttemptLog } from '../../src/server/rules/attempt-log.js';
import type { SmtpAttempt } from '../../src/server/base/smtp-attempts.js';
import { fakeClock } from './helpers.js';

function attempt(to: string, at: number, text = 'x'): SmtpAttempt {
  return { at, clientIp: '127.0.0.1', from: 'app@example.com', to, stage: 'data', code: 250, enhancedCode: '2.6.0', text, outcome: 'accepted' };
}

describe('AttemptLog', () => {
  it('forgets entries older than the retention, oldest first, across addresses', () => {
    const clock = fakeClock(0);
    const log = new AttemptLog({ clock, retention: 1000 });
    log.record(attempt('a@x.test', 0));
    clock.set(400);
    log.record(attempt('b@x.test', 400));
    clock.set(1000);
    expect(log.list('a@x.test')).toEqual([]);
    expect(log.list('b@x.test').map((e) => e.at)).toEqual([400]);
    clock.set(1400);
    expect(log.list('b@x.test')).toEqual([]);
    expect(log.size).toBe(0);
  });

  it('keeps the newest entries of an address past its cap, and of the whole log past its cap', () => {
    const clock = fakeClock(0);
    const log = new AttemptLog({ clock, retention: 1e9, maxPerAddress: 3, maxEntries: 5 });
    for (let i = 0; i < 5; i++) log.record(attempt('a@x.test', i, `a${i}`));
    expect(log.list('a@x.test').map((e) => e.text)).toEqual(['a2', 'a3', 'a4']);
    for (let i = 0; i < 3; i++) log.record(attempt('b@x.test', 10 + i, `b${i}`));
    // 6 live entries over a cap of 5: the oldest of the whole log (a2) goes.
    expect(log.size).toBe(5);
    expect(log.list('a@x.test').map((e) => e.text)).toEqual(['a3', 'a4']);
    expect(log.list('b@x.test').map((e) => e.text)).toEqual(['b0', 'b1', 'b2']);
  });

  it('after a delete, new attempts of the address are not pushed out by the old ones', () => {
    const clock = fakeClock(0);
    const log = new AttemptLog({ clock, retention: 1000, maxEntries: 3 });
    log.record(attempt('a@x.test', 0, 'old'));
    expect(log.delete('a@x.test')).toBe(1);
    log.record(attempt('a@x.test', 10, 'new1'));
    log.record(attempt('b@x.test', 20, 'b'));
    log.record(attempt('a@x.test', 30, 'new2'));
    expect(log.list('a@x.test').map((e) => e.text)).toEqual(['new1', 'new2']);
    clock.set(1005);
    expect(log.list('a@x.test').map((e) => e.text)).toEqual(['new1', 'new2']);
    expect(log.size).toBe(3);
  });

  it('holds no more slots than live entries need, however many an address had', () => {
    const clock = fakeClock(0);
    const log = new AttemptLog({ clock, retention: 1e9, maxPerAddress: 2 });
    for (let i = 0; i < 50_000; i++) log.record(attempt('busy@x.test', i));
    expect(log.size).toBe(2);
    expect(log.list('busy@x.test').map((e) => e.at)).toEqual([49_998, 49_999]);
  });
});
