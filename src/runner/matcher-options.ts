// The options object of a runner-neutral matcher (the SMTP and the webhook
// matchers), checked the same way for each: an object, no unknown key, and
// each count or duration named in the error when it is not one.
import { describeValue, expectedError } from '../contract/validation.js';

/** The options as a record, once they are known to be an object with only `keys`. */
export function checkMatcherOptions(name: string, options: unknown, keys: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw new TypeError(`Expected ${name} options to be an object, got ${describeValue(options)}`);
  for (const key of Object.keys(options)) {
    if (!keys.includes(key)) throw new TypeError(`Unknown ${name} option \`${key}\`; expected one of ${keys.join(', ')}`);
  }
  return options as Record<string, unknown>;
}

/** A whole-number option, at least `min`, or undefined when it is not given. */
export function countOption(o: Record<string, unknown>, key: string, min = 0): number | undefined {
  const value = o[key];
  if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value >= min))
    throw expectedError(key, min === 0 ? 'a whole number' : `a whole number from ${min}`, value);
  return value;
}

/** A duration option in milliseconds, or undefined when it is not given. */
export function msOption(o: Record<string, unknown>, key: string): number | undefined {
  const value = o[key];
  if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0))
    throw expectedError(key, 'a non-negative number of milliseconds', value);
  return value;
}
