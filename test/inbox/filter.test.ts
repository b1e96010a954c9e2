import { describe, expect, it } from 'vitest';
import { compileFilter, describeFilter, type MailFilter } from '../../src/inbox/filter.js';
import type { MailSummary } from '../../src/client/messages.js';

const summary = (over: Partial<MailSummary> = {}): MailSummary => ({
  id: '1',
  from: 'Acme <hello@acme.example>',
  to: ['signup-1@mailroom.test', 'other@mailroom.test'],
  subject: 'Confirm your email',
  preview: 'Hi',
  receivedAt: new Date('2030-01-01T12:00:01Z'),
  size: 100,
  ...over,
});

describe('compileFilter', () => {
  it('matches strings as case-insensitive substrings', () => {
    const f = compileFilter({ subject: 'CONFIRM' });
    expect(f.matches(summary())).toBe(true);
    expect(f.matches(summary({ subject: 'Welcome' }))).toBe(false);
  });

  it('matches `to` against any one recipient and `from` against name and address', () => {
    expect(compileFilter({ to: 'other@' }).matches(summary())).toBe(true);
    expect(compileFilter({ to: 'nobody' }).matches(summary())).toBe(false);
    expect(compileFilter({ from: 'acme' }).matches(summary())).toBe(true);
    expect(compileFilter({ from: 'hello@acme.example' }).matches(summary())).toBe(true);
  });

  it('needs every given part to match', () => {
    const f = compileFilter({ from: 'acme', subject: 'invoice' });
    expect(f.matches(summary())).toBe(false);
    expect(f.matches(summary({ subject: 'Your invoice' }))).toBe(true);
  });

  it('uses a RegExp as written, even a global one, the same way every time', () => {
    const f = compileFilter({ subject: /^confirm/gi });
    expect([1, 2, 3].map(() => f.matches(summary()))).toEqual([true, true, true]);
    expect(compileFilter({ subject: /^Confirm your$/ }).matches(summary())).toBe(false);
  });

  it('asks `where` last and only takes a true as a match', () => {
    const big = (s: MailSummary) => s.size > 50;
    expect(compileFilter({ where: big }).matches(summary())).toBe(true);
    expect(compileFilter({ where: big }).matches(summary({ size: 10 }))).toBe(false);
    expect(compileFilter({ where: (() => 'yes') as unknown as MailFilter['where'] }).matches(summary())).toBe(false);
  });

  it('matches everything when empty', () => {
    expect(compileFilter().matches(summary())).toBe(true);
    expect(compileFilter({}).isEmpty).toBe(true);
  });

  it('names what is wrong with a bad filter', () => {
    expect(() => compileFilter({ subjet: 'x' } as MailFilter)).toThrow('Unknown mail filter key `subjet`: expected `from`, `to`, `subject` or `where`');
    expect(() => compileFilter({ subject: '' })).toThrow('Expected `subject` to be a non-empty string or a RegExp, got an empty string');
    expect(() => compileFilter({ from: 42 } as unknown as MailFilter)).toThrow('Expected `from` to be a string or a RegExp, got 42');
    expect(() => compileFilter('Confirm' as unknown as MailFilter)).toThrow(`wrap it: { subject: "Confirm" }`);
    expect(() => compileFilter({ where: 'x' } as unknown as MailFilter)).toThrow(TypeError);
    expect(() => compileFilter(null as unknown as MailFilter)).toThrow(/got null/);
  });
});

describe('describeFilter', () => {
  it('says the filter in words', () => {
    expect(describeFilter({ subject: 'Confirm' })).toBe('subject ~ "Confirm"');
    expect(describeFilter({ from: 'acme', subject: /invoice \d+/i })).toBe('from ~ "acme" and subject ~ /invoice \\d+/i');
    expect(describeFilter({ to: 'x@' })).toBe('to ~ "x@"');
    function isInvoice() {
      return true;
    }
    expect(describeFilter({ where: isInvoice })).toBe('where(isInvoice)');
    expect(describeFilter({ where: () => true })).toBe('where(…)');
    expect(describeFilter()).toBe('any mail');
  });
});
