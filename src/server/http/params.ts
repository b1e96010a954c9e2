// Query parameters, checked the same way on every route: each given at most
// once, malformed ones refused with `invalid_request` naming the parameter.
import { isWellFormedId } from '../store/ids.js';
import { Refusal } from '../../contract/refusal.js';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

export function singleParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new Refusal(400, 'invalid_request', `Parameter \`${name}\` was given ${values.length} times; give it once`);
  return values[0];
}

export function parseLimit(params: URLSearchParams): number {
  const value = singleParam(params, 'limit');
  if (value === undefined) return DEFAULT_LIMIT;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) {
    throw new Refusal(400, 'invalid_request', `Parameter \`limit\` must be a whole number from 1 to ${MAX_LIMIT}, got ${JSON.stringify(value)}`);
  }
  return limit;
}

/** A message id as the API hands them out, or undefined when absent. */
export function parseSinceId(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isWellFormedId(value)) {
    throw new Refusal(400, 'invalid_request', `\`${name}\` must be a message id as the list returns them (11 characters of 0-9 and a-z), got ${JSON.stringify(value)}`);
  }
  return value;
}
