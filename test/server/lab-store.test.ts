// The deferral lab's state behind its boundary (src/server/rules/lab-store.ts),
// without SMTP: the attempt log's bounds (retention, the cap per address, the
// cap on the whole log, forgetting an address), the rules' own bounds, and,
// in the `redis` project, the Redis lab against the memory lab through random
// rules, SMTP steps and attempts: every answer must be the same. Part of the
// server contract suite (vitest.config.ts), so each test runs on both labs.
import { createClient } from '@redis/client';
import { describe, expect, inject, it } from 'vitest';
import type { DeliveredCopy, LabSender, LabStore } from '../../src/server/rules/lab-store.js';
import { RedisMailStore } from '../../src/server/redis/redis-store.js';
import { MessageStore } from '../../src/server/store/message-store.js';
import { MemoryLabStore } from '../../src/server/rules/memory-lab.js';
import { parseRuleInput } from '../../src/server/rules/rule-input.js';
import type { SmtpAttempt } from '../../src/server/base/smtp-attempts.js';
import { fakeClock, openTestLab, openTestStore } from './helpers.js';

const SENDER: LabSender = { clientIp: '127.0.0.1', from: 'app@example.com' };

function attempt(to: string, at: number, text = 'x'): SmtpAttempt {
  return { at, clientIp: '127.0.0.1', from: 'app@example.com', to, stage: 'data', code: 250, enhancedCode: '2.6.0', text, outcome: 'accepted' };
}

const texts = async (lab: LabStore, address: string) => (await lab.attempts(address)).map((entry) => entry.text);

function lcg(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    // the high bits: an LCG's low bits repeat with a short period
    return (state >>> 8) % n;
  };
}

describe('the attempt log', () => {
  it('forgets entries older than the retention, oldest first, across addresses', async () => {
    const clock = fakeClock(1_000_000);
    const { lab, attemptsHeld } = await openTestLab({ clock, retention: 1000 });
    await lab.record(attempt('a@x.test', clock.now(), 'a'));
    clock.advance(400);
    await lab.record(attempt('b@x.test', clock.now(), 'b'));
    clock.advance(600);
    expect(await texts(lab, 'a@x.test')).toEqual([]);
    expect(await texts(lab, 'b@x.test')).toEqual(['b']);
    clock.advance(400);
    expect(await texts(lab, 'b@x.test')).toEqual([]);
    expect(await attemptsHeld()).toBe(0);
  });

  it('keeps the newest entries of an address past its cap, and of the whole log past its cap', async () => {
    const clock = fakeClock();
    const { lab, attemptsHeld } = await openTestLab({ clock, retention: 1e9, maxAttemptsPerAddress: 3, maxAttempts: 5 });
    for (let i = 0; i < 5; i++) await lab.record(attempt('a@x.test', clock.now() + i, `a${i}`));
    expect(await texts(lab, 'a@x.test')).toEqual(['a2', 'a3', 'a4']);
    for (let i = 0; i < 3; i++) await lab.record(attempt('b@x.test', clock.now() + 10 + i, `b${i}`));
    // 6 live entries over a cap of 5: the oldest of the whole log (a2) goes.
    expect(await attemptsHeld()).toBe(5);
    expect(await texts(lab, 'a@x.test')).toEqual(['a3', 'a4']);
    expect(await texts(lab, 'b@x.test')).toEqual(['b0', 'b1', 'b2']);
  });

  it('keeps 1,000 attempts per address by default, the newest', async () => {
    const clock = fakeClock();
    const { lab } = await openTestLab({ clock, retention: 1e9 });
    await Promise.all(Array.from({ length: 1_005 }, async (_, i) => lab.record(attempt('busy@x.test', clock.now(), `n${i}`))));
    const kept = await texts(lab, 'busy@x.test');
    expect(kept).toHaveLength(1_000);
    expect([kept[0], kept[999]]).toEqual(['n5', 'n1004']);
  });

  it('keeps every field of an entry as the feed published it', async () => {
    const clock = fakeClock();
    const { lab } = await openTestLab({ clock, retention: 1e9 });
    const full: SmtpAttempt = {
      at: clock.now(),
      clientIp: '::ffff:127.0.0.1',
      from: '',
      to: 'full@x.test',
      stage: 'data',
      code: 550,
      enhancedCode: '5.1.1',
      text: 'Refused permanently, do not retry (mailroom test rule: reject on full@x.test)',
      outcome: 'rejected',
      beganAt: clock.now() - 5,
      rule: 'reject',
      headerMessageId: '<one@app.example>',
      headerSubject: 'Grüße',
    };
    const dropped: SmtpAttempt = { ...attempt('full@x.test', clock.now() + 1), code: undefined, enhancedCode: undefined, outcome: 'dropped' };
    await lab.record(full);
    await lab.record(dropped);
    const [first, second] = await lab.attempts('full@x.test');
    expect(first).toEqual(full);
    expect(second).toMatchObject({ outcome: 'dropped' });
    expect(second!.code ?? null).toBeNull();
  });

  it('forgets an address with its mailbox; new attempts are not pushed out by the old ones', async () => {
    const clock = fakeClock();
    const { lab, attemptsHeld } = await openTestLab({ clock, retention: 1000, maxAttempts: 3 });
    await lab.record(attempt('a@x.test', clock.now(), 'old'));
    await lab.addRule('a@x.test', parseRuleInput({ kind: 'defer' }));
    await lab.forget('a@x.test');
    expect(await lab.rules('a@x.test')).toEqual([]);
    await lab.record(attempt('a@x.test', clock.now() + 10, 'new1'));
    await lab.record(attempt('b@x.test', clock.now() + 20, 'b'));
    await lab.record(attempt('a@x.test', clock.now() + 30, 'new2'));
    expect(await texts(lab, 'a@x.test')).toEqual(['new1', 'new2']);
    clock.advance(1005);
    expect(await texts(lab, 'a@x.test')).toEqual(['new1', 'new2']);
    expect(await attemptsHeld()).toBe(3);
  });
});

describe('the rules', () => {
  it('are added in order with ids, listed, refused past 32, and cleared with what they remembered', async () => {
    const clock = fakeClock();
    const { lab } = await openTestLab({ clock, retention: 1e9 });
    const to = 'rules@x.test';
    const first = await lab.addRule(to, parseRuleInput({ kind: 'greylist', min_delay_ms: 5000 }));
    expect(first.rule).toEqual({ kind: 'greylist', minDelayMs: 5000, resetOnEarlyRetry: false, id: 'r1', setAt: clock.now(), remaining: null });
    const second = await lab.addRule(to, parseRuleInput({ kind: 'defer', times: 2, text: 'Busy' }));
    expect(second.rules.map((rule) => rule.id)).toEqual(['r1', 'r2']);
    expect(second.rule).toMatchObject({ kind: 'defer', code: 451, enhancedCode: '4.3.0', text: 'Busy', stage: 'rcpt', times: 2, remaining: 2 });
    expect(await lab.rules(to)).toEqual(second.rules);
    for (let i = 2; i < 32; i++) await lab.addRule(to, parseRuleInput({ kind: 'slow', delay_ms: 1, stage: 'data' }));
    await expect(Promise.resolve().then(() => lab.addRule(to, parseRuleInput({ kind: 'reject' })))).rejects.toThrow(
      `${to} already has 32 rules, the most one address may hold`,
    );
    // the greylist remembered the triple; clearing forgets it
    expect((await lab.step('rcpt', [to], SENDER))?.decision).toMatchObject({ code: 451, enhancedCode: '4.7.1' });
    expect(await lab.clearRules(to)).toBe(32);
    expect(await lab.step('rcpt', [to], SENDER)).toBeUndefined();
    const again = await lab.addRule(to, parseRuleInput({ kind: 'greylist', min_delay_ms: 5000 }));
    expect(again.rule.id).toBe('r1');
    clock.advance(10_000);
    expect((await lab.step('rcpt', [to], SENDER))?.decision).toMatchObject({ code: 451, text: expect.stringContaining('first attempt') });
  });

  it('remember at most 1,000 greylisted triples per address, the earliest seen going first', async () => {
    const clock = fakeClock();
    const { lab } = await openTestLab({ clock, retention: 1e9 });
    const to = 'many-senders@x.test';
    await lab.addRule(to, parseRuleInput({ kind: 'greylist', min_delay_ms: 1000 }));
    const from = (i: number) => ({ clientIp: '10.0.0.1', from: `s${i}@example.com` });
    await Promise.all(Array.from({ length: 1_001 }, async (_, i) => lab.step('rcpt', [to], from(i))));
    clock.advance(1000);
    // s1 is remembered and passes; s0 was pushed out by the 1,001st, so it is new again
    expect((await lab.step('rcpt', [to], from(1)))?.decision).toBeUndefined();
    expect((await lab.step('rcpt', [to], from(0)))?.decision).toMatchObject({ code: 451, text: expect.stringContaining('first attempt') });
  });
});

describe('the memory lab', () => {
  it('answers every call of the SMTP path synchronously, so the intake replies in the same tick', () => {
    const lab = new MemoryLabStore({ clock: fakeClock(), retention: 1e9 });
    expect(lab.step('rcpt', ['none@x.test'], SENDER)).toBeUndefined();
    lab.addRule('ruled@x.test', parseRuleInput({ kind: 'defer' }));
    const step = lab.step('rcpt', ['ruled@x.test'], SENDER);
    expect(step).not.toBeInstanceOf(Promise);
    expect(step?.decision).toMatchObject({ code: 451 });
    expect(lab.decide('data', ['ruled@x.test'], SENDER)).toBeUndefined();
    expect(lab.record(attempt('ruled@x.test', 1))).toBeUndefined();
    expect(lab.flushed()).toBeUndefined();
  });
});

describe.runIf(inject('redisURL'))('the Redis lab', () => {
  it('says when the attempts it was given can be read through another connection (another server), so the intake replies after that', async () => {
    const clock = fakeClock();
    const { lab, another } = await openTestLab({ clock, retention: 1e9 });
    const elsewhere = await another!();
    expect(lab.flushed()).toBeUndefined();
    for (let i = 0; i < 50; i++) void lab.record(attempt('flushed@x.test', clock.now(), `n${i}`));
    const flushed = lab.flushed();
    expect(flushed).toBeInstanceOf(Promise);
    await flushed;
    expect(await texts(elsewhere, 'flushed@x.test')).toHaveLength(50);
    expect(lab.flushed()).toBeUndefined();
  });

  it('forgets the expired entry of an address even when a server with a clock behind wrote it after a newer one', async () => {
    // The whole log is swept in time order, an address's entries are kept in
    // arrival order: here the expired entry is the address's second, not its first.
    const clock = fakeClock();
    const { lab, another } = await openTestLab({ clock, retention: 1000 });
    const behind = await another!();
    const address = `skew-${Math.random().toString(36).slice(2)}@x.test`;
    await lab.record(attempt(address, clock.now() + 600, 'ahead'));
    await behind.record(attempt(address, clock.now(), 'behind'));
    await lab.record(attempt(address, clock.now() + 700, 'later'));
    expect(await texts(lab, address)).toEqual(['ahead', 'behind', 'later']);
    clock.advance(1100);
    expect(await texts(lab, address)).toEqual(['ahead', 'later']);
    // gone from Redis, not only left out of the answer
    const admin = createClient({ url: inject('redisURL') });
    await admin.connect();
    try {
      const [key] = await admin.keys(`*:lab:l:${address}`);
      expect((await admin.lRange(key!, 0, -1)).map((entry) => JSON.parse(entry.slice(entry.indexOf(' ') + 1))[6])).toEqual(['ahead', 'later']);
    } finally {
      await admin.quit();
    }
  });

  it('stores mail to addresses without rules and logs its accepted attempts in one go, and leaves mail to a ruled address to the steps', async () => {
    const clock = fakeClock();
    const { store } = await openTestStore({ clock, retention: 1e9, maxMessages: Infinity });
    const lab = (store as RedisMailStore).lab();
    expect(lab.deliveryBeside(new MessageStore({ clock, retention: 1e9, maxMessages: Infinity }))).toBeUndefined();
    const delivery = lab.deliveryBeside(store)!;
    const raw = Buffer.from('Subject: one go\r\n\r\nhello\r\n');
    // what the intake logs for a stored mail, its id in its text when it has one copy (data-intake.ts)
    const accepted = (copies: readonly DeliveredCopy[]) =>
      copies.map((copy) => ({
        ...attempt(
          copy.mailbox,
          clock.now(),
          copies.length === 1 ? `Stored as ${copy.id} for ${copy.mailbox} "quoted"` : `Stored for ${copies.length} mailboxes`,
        ),
        messageId: copy.id,
        beganAt: clock.now() - 5,
      }));

    const both = (await delivery.deliverUnlessRuled(['a@x.test', 'b@x.test', 'a@x.test'], raw, 'app@example.com', accepted))!;
    expect(both.map((copy) => copy.mailbox)).toEqual(['a@x.test', 'b@x.test']);
    expect((await store.list('b@x.test', 10)).map((message) => message.id)).toEqual([both[1]!.id]);
    const [toA, toB] = accepted(both);
    expect(await lab.attempts('a@x.test')).toEqual([toA]);
    expect(await lab.attempts('b@x.test')).toEqual([toB]);
    // the feed hands the stored copy to `record` beside its attempt: logged once, not twice
    await lab.record(toA!, both[0]);
    expect(await lab.attempts('a@x.test')).toHaveLength(1);

    const [one] = (await delivery.deliverUnlessRuled(['c@x.test'], raw, 'app@example.com', accepted))!;
    expect(await lab.attempts('c@x.test')).toEqual(accepted([one!]));
    expect((await lab.attempts('c@x.test'))[0]!.text).toBe(`Stored as ${one!.id} for c@x.test "quoted"`);

    // one recipient with rules: nothing stored or logged for any of them
    await lab.addRule('ruled@x.test', parseRuleInput({ kind: 'defer', stage: 'data' }));
    expect(await delivery.deliverUnlessRuled(['d@x.test', 'ruled@x.test'], raw, 'app@example.com', accepted)).toBeUndefined();
    // a NUL of the sender's own would read as a hole for the id: such mail takes the steps' way too
    const withNul = (copies: readonly DeliveredCopy[]) => accepted(copies).map((entry) => ({ ...entry, from: 'odd\u0000@example.com' }));
    expect(await delivery.deliverUnlessRuled(['d@x.test'], raw, 'odd\u0000@example.com', withNul)).toBeUndefined();
    expect(await store.list('d@x.test', 10)).toEqual([]);
    expect(await lab.attempts('d@x.test')).toEqual([]);
  });

  it('answers as the memory lab does through random rules, SMTP steps, attempts, clears and forgets', async () => {
    const clock = fakeClock();
    const memory = new MemoryLabStore({ clock, retention: 20_000, maxAttemptsPerAddress: 6 });
    const { lab: redis } = await openTestLab({ clock, retention: 20_000, maxAttemptsPerAddress: 6 });
    const random = lcg(11);
    const pick = <T>(items: readonly T[]): T => items[random(items.length)]!;
    const addresses = ['a@x.test', 'b@x.test', 'c@x.test'];
    const senders: LabSender[] = [SENDER, { clientIp: '10.0.0.2', from: 'App@Example.com' }, { clientIp: '10.0.0.2', from: '' }];
    const specs = [
      () => ({ kind: 'greylist', min_delay_ms: pick([0, 500, 1500]), reset_on_early_retry: random(2) === 1 }),
      () => ({ kind: 'throttle', limit: random(4), per_ms: pick([700, 2000, 5000]) }),
      () => ({ kind: 'defer', stage: pick(['rcpt', 'data']), times: 1 + random(3), ...(random(2) ? { code: 452, text: 'Full' } : {}) }),
      () => ({ kind: 'reject', stage: pick(['rcpt', 'data']), times: 1 + random(2) }),
      () => ({ kind: 'slow', delay_ms: pick([0, 5]), stage: pick(['rcpt', 'data']), ...(random(2) ? { times: 1 } : {}) }),
      () => ({ kind: 'disconnect', stage: pick(['rcpt', 'data']) }),
    ];
    /** Both labs' answers to one call, thrown errors as their messages. */
    const both = async <T>(call: (lab: LabStore) => T | Promise<T>): Promise<[unknown, unknown]> => {
      const settle = async (lab: LabStore) => {
        try {
          return { value: await call(lab) };
        } catch (error) {
          return { error: (error as Error).message };
        }
      };
      return [JSON.parse(JSON.stringify(await settle(memory))), JSON.parse(JSON.stringify(await settle(redis)))];
    };
    const decisions = { reply: 0, drop: 0, hold: 0, none: 0 };
    for (let step = 0; step < 700; step++) {
      const op = random(100);
      const to = pick(addresses);
      let answers: [unknown, unknown];
      if (op < 15) {
        const spec = parseRuleInput(pick(specs)());
        answers = await both((lab) => lab.addRule(to, spec));
      } else if (op < 60) {
        const stage = random(3) === 0 ? 'data' : 'rcpt';
        const recipients = stage === 'rcpt' ? [to] : addresses.filter(() => random(2) === 1);
        const sender = pick(senders);
        answers = await both((lab) => lab.step(stage, recipients, sender));
        const first = answers[0] as { value?: { holdMs: number; decision?: { action: string } } };
        if (first.value?.holdMs) {
          decisions.hold++;
          expect(answers[1], `step ${step} (${stage} ${recipients.join(' ')})`).toEqual(answers[0]);
          answers = await both((lab) => lab.decide(stage, recipients, sender));
        } else if (first.value?.decision) decisions[first.value.decision.action as 'reply' | 'drop']++;
        else decisions.none++;
      } else if (op < 75) {
        const entry = { ...attempt(to, clock.now(), `step ${step}`), outcome: pick(['accepted', 'deferred', 'dropped'] as const) };
        answers = await both((lab) => lab.record(entry));
      } else if (op < 85) {
        answers = await both((lab) => lab.attempts(to));
      } else if (op < 90) {
        answers = await both((lab) => lab.rules(to));
      } else if (op < 93) {
        answers = await both((lab) => lab.clearRules(to));
      } else if (op < 95) {
        answers = await both((lab) => lab.forget(to));
      } else {
        clock.advance(random(1200));
        continue;
      }
      expect(answers[1], `step ${step}, operation ${op}`).toEqual(answers[0]);
    }
    // the random walk reached every kind of answer
    expect(
      Object.values(decisions).every((count) => count > 5),
      JSON.stringify(decisions),
    ).toBe(true);
  });
});
