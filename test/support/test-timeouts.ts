// The test timeout of the tests that are heavy by design: a thousand
// requests each waiting for the one before (1,000 RCPTs in one transaction,
// on Redis one rules look-up each), a property run of thousands of store
// calls, several `mailroom serve` processes on one Redis. Alone they take
// 1-15 s. In `npm test` with `stress-ng --cpu 2` beside it (the flake runs),
// every one of those waits is also a wait for one of 2 saturated cores, and
// they took up to 60 s (Vitest's timeout here, which cut three of them
// short) and the store's model test up to 158 s. A hang guard, not a speed
// claim: speed is measured in bench/.
export const HEAVY_TEST_TIMEOUT_MS = 180_000;
