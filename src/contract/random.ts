// A source of randomness, injected wherever a delay is drawn (the wait
// schedule, webhook retries) so tests can fix it.

/** Uniformly distributed numbers in [0, 1), like `Math.random`. */
export type RandomSource = () => number;
