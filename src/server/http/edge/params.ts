// Query parameters, checked the same way on every route: each given at most
// once, malformed ones refused with `invalid_request` naming the parameter.
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../../contract/limits.js';
import { Refusal } from '../../../contract/refusal.js';
import { isWellFormedId } from '../../store/ids.js';

export function singleParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw new Refusal(400, 'invalid_request', `Parameter \`${name}\` was given ${values.length} times; give it once`);
  return values[0];
}

export function parseLimit(params: URLSearchParams): number {
  const value = singleParam(params, 'limit');
  if (value === undefined) return DEFAULT_LIST_LIMIT;
  const limit = /^[0-9]{1,3}$/.test(value) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIST_LIMIT)) {
    throw new Refusal(400, 'invalid_request', `Parameter \`limit\` must be a whole number from 1 to ${MAX_LIST_LIMIT}, got ${JSON.stringify(value)}`);
  }
  return limit;
}

/** A message id as the API hands them out, or undefined when absent. */
export function parseSinceId(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isWellFormedId(value)) {
    throw new Refusal(
      400,
      'invalid_request',
      `\`${name}\` must be a message id as the list returns them (11 characters of 0-9 and a-z), got ${JSON.stringify(value)}`,
    );
  }
  return value;
}
