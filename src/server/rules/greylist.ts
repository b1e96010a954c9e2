// Greylisting: the first attempt of an unseen (client IP, MAIL FROM, RCPT TO)
// triple is deferred, and a retry of the same triple after the window is let
// through - from then on the triple passes. A retry inside the window is
// deferred again and, with `resetOnEarlyRetry`, starts the window over, as
// some receivers do to impatient senders.
import type { TripleRecord } from './rules.js';

/** Triples remembered per address; the oldest go first (a test sends from a handful of senders). */
export const MAX_TRIPLES_PER_ADDRESS = 1_000;

export type GreylistAnswer =
  { readonly pass: true } | { readonly pass: false; readonly reason: 'first' | 'early'; readonly retryInMs: number; readonly restarted: boolean };

export function tripleKey(clientIp: string, from: string, to: string): string {
  return `${clientIp}\n${from.toLowerCase()}\n${to}`;
}

export function greylist(
  triples: Record<string, TripleRecord>,
  rule: { readonly minDelayMs: number; readonly resetOnEarlyRetry: boolean },
  key: string,
  now: number,
): GreylistAnswer {
  const seen = triples[key];
  if (!seen) {
    const keys = Object.keys(triples);
    if (keys.length >= MAX_TRIPLES_PER_ADDRESS) delete triples[keys[0]!];
    triples[key] = { firstSeenAt: now, passedAt: null };
    return { pass: false, reason: 'first', retryInMs: rule.minDelayMs, restarted: false };
  }
  if (seen.passedAt !== null) return { pass: true };
  const waited = now - seen.firstSeenAt;
  if (waited >= rule.minDelayMs) {
    seen.passedAt = now;
    return { pass: true };
  }
  if (rule.resetOnEarlyRetry) {
    seen.firstSeenAt = now;
    return { pass: false, reason: 'early', retryInMs: rule.minDelayMs, restarted: true };
  }
  return { pass: false, reason: 'early', retryInMs: rule.minDelayMs - waited, restarted: false };
}
