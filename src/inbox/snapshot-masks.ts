// The masks of a mail snapshot: each value that differs from run to run
// (the test's fresh address, a one-time code, a link's token, a date, the
// ids a provider or the sender made up) becomes its label in brackets, so
// the same mail sent again renders the same, and a snapshot only changes
// when the mail does. Each mask has a label: the snapshot says what was
// there (`[code]`, not `***`), and an option turns it off or adds one.
import { ADDRESS_RANDOM_BITS } from '../contract/fresh-address.js';
import { describeValue, expectedError } from '../contract/validation.js';

/** A mask's pattern (a RegExp, or a string masked wherever it occurs), or `false` to turn a default mask off. */
export type SnapshotMask = RegExp | string | false;

/** The masks a snapshot applies, in order; each match becomes `[label]`. */
export const DEFAULT_MASKS = Object.freeze([
  'token',
  'address',
  'provider-id',
  'message-id',
  'uuid',
  'code',
  'random',
  'date',
] as const satisfies readonly string[]);

export type DefaultMaskLabel = (typeof DEFAULT_MASKS)[number];

/** The mail's own per-run values, which the literal masks look for. */
export interface MaskedValues {
  /** The test's own address. */
  readonly address?: string | undefined;
  readonly messageId?: string | null | undefined;
  readonly providerId?: string | undefined;
  readonly codes: readonly string[];
}

/** A mask ready to run: a label and every pattern that finds what it hides. */
interface Mask {
  readonly label: string;
  readonly patterns: readonly RegExp[];
  /** Only inside links, after the host (the token mask). */
  readonly inLinks?: true;
}

const MONTH = '(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)';
const WEEKDAY = '(?:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)';
// A time that may follow a written date: ", 10:15", " at 3:04 PM", " 14:00:59 UTC".
const TIME = '(?:,?\\s+(?:at\\s+)?\\d{1,2}:\\d{2}(?::\\d{2})?(?:\\s*[AaPp]\\.?[Mm]\\.?)?(?:\\s+(?:[A-Z]{2,5}|[+-]\\d{4}))?)?';
const DATES = [
  // ISO 8601: 2026-07-20, 2026-07-20T10:15:00.000Z, 2026-07-20 10:15+02:00
  /(?<!\d)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?!\d)/g,
  // RFC 5322, a Date header's form: Mon, 20 Jul 2026 10:15:00 +0000
  new RegExp(`(?<!\\w)(?:${WEEKDAY},?\\s+)?\\d{1,2}\\s+${MONTH}\\s+\\d{4}\\s+\\d{1,2}:\\d{2}(?::\\d{2})?(?:\\s+(?:[+-]\\d{4}|[A-Z]{2,5}))?(?!\\w)`, 'g'),
  // Written: July 20, 2026 · Monday, Jul 20th 2026 at 3:04 PM · 20 July 2026
  new RegExp(`(?<!\\w)(?:${WEEKDAY},?\\s+)?${MONTH}\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?,?\\s+\\d{4}${TIME}(?!\\w)`, 'g'),
  new RegExp(`(?<!\\w)(?:${WEEKDAY},?\\s+)?\\d{1,2}(?:st|nd|rd|th)?\\s+${MONTH}\\.?,?\\s+\\d{4}${TIME}(?!\\w)`, 'g'),
  // Numeric: 07/20/2026, 20.07.2026
  /(?<![\w./])\d{1,2}[/.]\d{1,2}[/.]\d{4}(?![\w/])/g,
];
const UUID = /(?<![0-9a-f])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![0-9a-f])/gi;
// The random part of a fresh address (address.ts): base32, after the readable prefix's hyphen.
const RANDOM = new RegExp(`(?<=[a-z0-9]-)[a-z2-7]{${Math.ceil(ADDRESS_RANDOM_BITS / 5)}}(?=@|%40)`, 'gi');
// A link, as it stands in a text part or between the <> of the readable HTML.
const LINK = /\bhttps?:\/\/[^\s<>"'`]+/gi;
// A run of base64url characters in a link's path, query or fragment.
const LINK_RUN = /[A-Za-z0-9_-]+/g;
const LABEL = /^[A-Za-z0-9][\w .-]{0,39}$/;

/**
 * The masks to apply, in order: the tokens in links (which must see each
 * link whole, before a mask of the caller's replaces its origin), the
 * caller's own (a label that is not a default's), then the other defaults.
 * A default is replaced by the caller's pattern when the label names it,
 * and left out when set to `false`.
 */
export function resolveMasks(values: MaskedValues, options: Readonly<Record<string, unknown>> | undefined): Mask[] {
  const given = validateMasks(options);
  const own: Mask[] = [];
  for (const [label, pattern] of Object.entries(given)) {
    if (!(DEFAULT_MASKS as readonly string[]).includes(label) && pattern !== false) own.push({ label, patterns: [toPattern(pattern)] });
  }
  const defaults: Mask[] = [];
  for (const label of DEFAULT_MASKS) {
    const override = given[label];
    if (override === false) continue;
    if (override !== undefined) defaults.push({ label, patterns: [toPattern(override)] });
    else defaults.push(defaultMask(label, values));
  }
  return [...defaults.filter((m) => m.inLinks), ...own, ...defaults.filter((m) => !m.inLinks)];
}

/** `text` with every match of every mask, in order, replaced by `[label]`. */
export function applyMasks(text: string, masks: readonly Mask[]): string {
  let out = text;
  for (const mask of masks) {
    const replace = (s: string) => mask.patterns.reduce((acc, pattern) => acc.replace(pattern, (match) => (match === '' ? match : `[${mask.label}]`)), s);
    out = mask.inLinks ? out.replace(LINK, (link) => afterHost(link, replace)) : replace(out);
  }
  return out;
}

function defaultMask(label: DefaultMaskLabel, values: MaskedValues): Mask {
  switch (label) {
    case 'address': {
      const address = values.address?.trim();
      return { label, patterns: address ? literals([address, encodeURIComponent(address)], 'gi') : [] };
    }
    case 'provider-id':
      return { label, patterns: values.providerId ? literals([values.providerId], 'g') : [] };
    case 'message-id': {
      const id = values.messageId?.replace(/^<|>$/g, '').trim();
      return { label, patterns: id ? literals([id], 'g') : [] };
    }
    case 'uuid':
      return { label, patterns: [UUID] };
    case 'code':
      // A code as a whole token: 482913 in "code: 482913" or "?code=482913", never inside 14829137.
      return { label, patterns: values.codes.filter((c) => c !== '').map((c) => new RegExp(`(?<![A-Za-z0-9])${escapeRegExp(c)}(?![A-Za-z0-9])`, 'g')) };
    case 'token':
      return { label, patterns: [new RegExp(LINK_RUN.source, 'g')], inLinks: true };
    case 'random':
      return { label, patterns: [RANDOM] };
    case 'date':
      return { label, patterns: DATES };
  }
}

/**
 * A link with the runs after its host that look made up replaced: hex of 8
 * or more with a digit and a letter (`9f2c4e1ab7d3…`), and runs of 16 or more
 * with a digit and a letter that are either mixed-case (base64) or unbroken
 * by `-` and `_` (a slug like `reset-your-password-2026` is words, kept).
 * The host is kept: it is the same every run.
 */
function afterHost(link: string, replace: (s: string) => string): string {
  const host = /^https?:\/\/[^/?#]*/i.exec(link)?.[0] ?? '';
  const rest = link.slice(host.length).replace(LINK_RUN, (run) => (isToken(run) ? replace(run) : run));
  return host + rest;
}

function isToken(run: string): boolean {
  const digit = /\d/.test(run);
  if (/^[0-9a-f]{8,}$/i.test(run) && digit && /[a-f]/i.test(run)) return true;
  if (run.length < 16 || !digit || !/[a-z]/i.test(run)) return false;
  return (/[a-z]/.test(run) && /[A-Z]/.test(run)) || !/[-_]/.test(run);
}

function validateMasks(options: unknown): Readonly<Record<string, SnapshotMask>> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options) || options instanceof RegExp) {
    throw expectedError('masks', 'an object of labels to a RegExp, a string or false, like { "order-number": /#\\d+/, date: false }', options);
  }
  for (const [label, pattern] of Object.entries(options)) {
    if (!LABEL.test(label)) {
      throw new TypeError(
        `Expected each mask label to be 1 to 40 letters, digits, spaces, "_", "." or "-" (starting with a letter or digit), got ${describeValue(label)}`,
      );
    }
    const ok = pattern instanceof RegExp || (typeof pattern === 'string' && pattern !== '') || pattern === false;
    if (!ok) throw expectedError(`masks.${label}`, 'a RegExp, a non-empty string or false (to turn a default mask off)', pattern);
    if (pattern === false && !(DEFAULT_MASKS as readonly string[]).includes(label)) {
      throw new TypeError(`Mask \`${label}\` is not a default mask, so \`false\` has nothing to turn off; the default masks are ${DEFAULT_MASKS.join(', ')}`);
    }
  }
  return options as Readonly<Record<string, SnapshotMask>>;
}

/** A caller's pattern, global (every match replaced) and not sticky. */
function toPattern(pattern: RegExp | string): RegExp {
  if (typeof pattern === 'string') return new RegExp(escapeRegExp(pattern), 'g');
  const flags = pattern.flags.replace(/[gy]/g, '');
  return new RegExp(pattern.source, `${flags}g`);
}

function literals(values: readonly string[], flags: string): RegExp[] {
  return [...new Set(values)].map((value) => new RegExp(escapeRegExp(value), flags));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
