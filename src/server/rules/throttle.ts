// Throttling: at most `limit` messages to an address in any sliding window of
// `perMs`. A message counts from the moment its recipient is accepted at
// RCPT, so messages sent side by side on several connections are counted
// before any of them finishes its DATA (counting only finished ones would let
// a parallel burst through whole).

export interface ThrottleAnswer {
  readonly throttled: boolean;
  /** Messages counted in the window, before this one. */
  readonly inWindow: number;
}

/** Drops acceptances older than `keepMs` (the longest window any throttle of the address uses). */
export function pruneAccepted(accepted: number[], now: number, keepMs: number): void {
  let drop = 0;
  while (drop < accepted.length && accepted[drop]! <= now - keepMs) drop++;
  if (drop > 0) accepted.splice(0, drop);
}

export function throttle(accepted: readonly number[], rule: { readonly limit: number; readonly perMs: number }, now: number): ThrottleAnswer {
  let inWindow = 0;
  for (let i = accepted.length - 1; i >= 0 && accepted[i]! > now - rule.perMs; i--) inWindow++;
  return { throttled: inWindow >= rule.limit, inWindow };
}
