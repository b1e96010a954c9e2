// The words of every option check, on both halves: "Expected `x` to be …,
// got …", naming the option and showing the value, so a typo reads the same
// wherever it is caught. A URL's password is never shown (url-credentials.ts).
import { withoutCredentials } from './url-credentials.js';

/** A value as an error message shows it: strings quoted (a URL's credentials masked), objects by kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(withoutCredentials(value));
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return `[${value.map(describeValue).join(', ')}]`;
  if (value instanceof RegExp) return `a RegExp ${String(value)}`;
  if (value !== null && typeof value === 'object') {
    // A class instance by its class: `got a Page` says more than `got an object`.
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}` : 'an object';
  }
  return String(value);
}

/** `Expected \`name\` to be what, got value` as a TypeError. */
export function expectedError(name: string, what: string, value: unknown): TypeError {
  return new TypeError(`Expected \`${name}\` to be ${what}, got ${describeValue(value)}`);
}

/** A duration option: a finite number of milliseconds, not negative (`positive`: above zero). */
export function assertMs(name: string, value: unknown, { positive = false } = {}): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (positive && value === 0)) {
    throw expectedError(name, `a ${positive ? 'positive' : 'non-negative'} number of milliseconds`, value);
  }
}

/** Undefined for a missing or blank value (an empty environment variable, an empty filter). */
export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** An environment variable's value, trimmed; undefined when unset or blank. */
export function fromEnv(value: string | undefined): string | undefined {
  return blankToUndefined(value)?.trim();
}
