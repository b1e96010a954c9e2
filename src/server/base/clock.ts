// The server's wall clock: injected (startServer's `clock` option) so that
// retention, budgets, holds and the lab's rules are testable without sleeping.

/** Wall-clock milliseconds, injectable so retention and budgets are testable without sleeping. */
export interface WallClock {
  now(): number;
}
