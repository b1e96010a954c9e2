// A value a boundary may answer at once or later: the in-memory
// implementations answer synchronously (so their speed and their unit tests
// stay what they were), the Redis ones with promises; every caller awaits.
export type Awaitable<T> = T | Promise<T>;
