// Which messages a wait is looking for, and how to say it in words. "Rule N"
// refers to docs/CONTRACT.md, "The client's nine rules".
//
// A filter looks at list summaries only - sender, recipients, subject - so
// a wait can decide without fetching anything; the body is fetched for the
// match alone (rule 8). Strings match as case-insensitive substrings, which
// is what survives small copy edits; RegExps match as written.
import type { MailSummary } from '../client/messages.js';
import { describeValue, expectedError } from '../contract/validation.js';

/** Text to look for: a string matches as a case-insensitive substring, a RegExp as itself. */
export type TextMatcher = string | RegExp;

/** Which mail a wait is for: every key given must match the list's summary of the mail. */
export interface MailFilter {
  /** Matched against the From header as listed (display name and address). */
  readonly from?: TextMatcher;
  /** Matched against each address of the To header; any one may match. */
  readonly to?: TextMatcher;
  /** Matched against the Subject header. */
  readonly subject?: TextMatcher;
  /** A last word on a summary; describe it by naming the function. */
  readonly where?: (summary: MailSummary) => boolean;
}

export interface CompiledFilter {
  readonly matches: (summary: MailSummary) => boolean;
  /** `subject ~ "Confirm" and from ~ "acme"`, or `any mail`. */
  readonly description: string;
  readonly isEmpty: boolean;
  readonly source: Readonly<MailFilter>;
}

const TEXT_KEYS = ['from', 'to', 'subject'] as const;
const KNOWN_KEYS = new Set<string>([...TEXT_KEYS, 'where']);

/** Validates a filter and turns it into a predicate plus its description. */
export function compileFilter(filter: MailFilter | undefined = {}): CompiledFilter {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter) || filter instanceof RegExp) {
    throw new TypeError(`Expected the mail filter to be an object like { subject: 'Confirm' }, got ${describeFilterValue(filter)}`);
  }
  for (const key of Object.keys(filter)) {
    if (!KNOWN_KEYS.has(key)) {
      throw new TypeError(`Unknown mail filter key \`${key}\`: expected \`from\`, \`to\`, \`subject\` or \`where\``);
    }
  }

  const tests: Array<(summary: MailSummary) => boolean> = [];
  const words: string[] = [];
  for (const key of TEXT_KEYS) {
    const value = filter[key];
    if (value === undefined) continue;
    const test = textTest(key, value);
    tests.push(key === 'to' ? (s) => s.to.some(test) : (s) => test(s[key]));
    words.push(`${key} ~ ${describeMatcher(value)}`);
  }
  const where = filter.where;
  if (where !== undefined) {
    if (typeof where !== 'function') {
      throw expectedError('where', 'a function (summary) => boolean', where);
    }
    tests.push((s) => where(s) === true);
    words.push(where.name && where.name !== 'where' ? `where(${where.name})` : 'where(…)');
  }

  const source = Object.freeze({ ...filter });
  return Object.freeze({
    matches: (summary: MailSummary) => tests.every((test) => test(summary)),
    description: words.length === 0 ? 'any mail' : words.join(' and '),
    isEmpty: words.length === 0,
    source,
  });
}

/** The filter in words, e.g. `subject ~ "Confirm"`; `any mail` when empty. */
export function describeFilter(filter?: MailFilter): string {
  return compileFilter(filter).description;
}

function textTest(key: string, value: unknown): (text: string) => boolean {
  if (typeof value === 'string') {
    if (value === '') throw new TypeError(`Expected \`${key}\` to be a non-empty string or a RegExp, got an empty string`);
    const needle = value.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  if (value instanceof RegExp) {
    // A global or sticky RegExp remembers `lastIndex` between calls and
    // would match every other summary; a private copy without those flags
    // matches each one afresh.
    const regex = new RegExp(value.source, value.flags.replace(/[gy]/g, ''));
    return (text) => regex.test(text);
  }
  throw expectedError(key, 'a string or a RegExp', value);
}

function describeMatcher(value: TextMatcher): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

/** A filter given as a bare string or RegExp gets the fix spelled out. */
function describeFilterValue(value: unknown): string {
  const wrap = value instanceof RegExp ? String(value) : typeof value === 'string' ? JSON.stringify(value) : undefined;
  return wrap === undefined ? describeValue(value) : `${describeValue(value)} (wrap it: { subject: ${wrap} })`;
}
