// Where the server reports what an operator should know (evictions, refusals of
// its own config). Plain strings: a logger is a sink, not a formatter.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Quiet about routine events, loud about anything that loses or refuses data. */
export const defaultLogger: Logger = Object.freeze({
  info: () => {},
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
});
