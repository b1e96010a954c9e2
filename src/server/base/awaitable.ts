// A value a boundary may answer at once or later: the in-memory
// implementations answer synchronously (so their speed and their unit tests
// stay what they were), the Redis ones with promises; every caller awaits.
export type Awaitable<T> = T | Promise<T>;

/** `then(value)` at once when `value` is already there (a memory implementation: in the same tick), else when it comes. */
export function whenReady<T>(value: Awaitable<T>, then: (value: T) => void, failed: (error: unknown) => void): void {
  if (value instanceof Promise) value.then(then, failed);
  else then(value);
}
