// Links and one-time codes, read out of a message's text and HTML.
import { Parser } from 'htmlparser2';
import { LinkifyIt } from 'linkify-it';

// Only links with a scheme: a footer saying "acme.com" is not a link the
// test wants to visit. Email addresses are not links either.
const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

/**
 * Every http(s) link, deduplicated, in document order: anchors (and URLs
 * written as text) of the HTML part first, then URLs in the plain-text
 * part that the HTML did not already have.
 */
export function extractLinks(html: string, text: string): string[] {
  return collectLinks(html, text);
}

/** `extractLinks`' one walk of the HTML, telling `onAnchor` each anchor's href and words on the way. */
function collectLinks(html: string, text: string, onAnchor?: HtmlVisitor['onAnchor']): string[] {
  const links = new Set<string>();
  const add = (candidate: string) => {
    const url = normalizeUrl(candidate);
    if (url) links.add(url);
  };
  if (html) {
    walkHtml(html, {
      onHref: add,
      onText: (chunk) => linkifyAll(chunk).forEach(add),
      ...(onAnchor ? { onAnchor } : {}),
    });
  }
  if (text) linkifyAll(text).forEach(add);
  return [...links];
}

/** A link and the words a reader clicks on (empty when it has none, e.g. a URL in the text part). */
export interface LabelledLink {
  readonly url: string;
  readonly text: string;
}

/**
 * `extractLinks`, each link with its anchor's words (the first anchor's,
 * whitespace collapsed; an image's alt text when the anchor wraps one), so
 * an agent can tell "Confirm my email" from "Unsubscribe" without reading
 * the HTML.
 */
export function extractLabelledLinks(html: string, text: string): LabelledLink[] {
  const labels = new Map<string, string>();
  const links = collectLinks(html, text, (href, words) => {
    const url = normalizeUrl(href);
    const label = words.replace(/\s+/g, ' ').trim();
    if (url && label && !labels.has(url)) labels.set(url, label);
  });
  return links.map((url) => ({ url, text: labels.get(url) ?? '' }));
}

/** The visible text of an HTML part (scripts, styles and comments dropped). */
export function htmlToText(html: string): string {
  const parts: string[] = [];
  walkHtml(html, { onText: (chunk) => parts.push(chunk) });
  return parts
    .join('')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n\n')
    .trim();
}

// One-time codes. The heuristic, in order of confidence:
//
// 1. A token next to a word that names a code - code, código, OTP, PIN,
//    passcode, password, token, verification/verify, one-time, confirm(ation),
//    mã - within 40 characters after the word ("Your code is 482913",
//    "Verification code:\n  K7Q-29X") or 30 characters before it
//    ("482913 is your code"), in the same sentence. A token is 4-8 letters and digits with at
//    least one digit, or two such groups joined by one hyphen.
// 2. Then any other standalone run of 4-8 digits, except four-digit numbers
//    from 1900 to 2099 (years in footers) - "Enter 482913 to continue".
//
// Tokens inside links and email addresses never count, nor digits that are
// part of a decimal, a time, a date, an amount, a percentage or a #number.
// Codes come out deduplicated, the keyword ones first, each group in
// document order; the text part is read before the HTML part.
const KEYWORD =
  /(?<![\p{L}\p{N}])(?:codes?|c[oó]digos?|otp|pin|passcode|password|token|verification|verify|one[- ]time|confirm(?:ation)?|mã)(?![\p{L}\p{N}])/giu;
const TOKEN = /(?<![\p{L}\p{N}_.,:/#$€£+@-])([A-Za-z0-9]{2,5}-[A-Za-z0-9]{2,5}|[A-Za-z0-9]{4,8})(?![\p{L}\p{N}_@%]|[.,:/-]\p{N})/gu;
const AFTER_KEYWORD = 40;
const SENTENCE_END = /[.!?](\s|$)/;
const BEFORE_KEYWORD = 30;

export function extractCodes(text: string, html: string): string[] {
  const sources = [text, html ? htmlToText(html) : ''].filter((s) => s.trim() !== '');
  const nearKeyword: string[] = [];
  const bare: string[] = [];
  for (const source of sources) {
    const masked = maskLinksAndAddresses(source);
    const keywords = [...masked.matchAll(KEYWORD)].map((m) => ({ start: m.index, end: m.index + m[0].length }));
    for (const match of masked.matchAll(TOKEN)) {
      const token = match[0];
      if (!/\d/.test(token)) continue;
      const start = match.index;
      const end = start + token.length;
      const adjacent = keywords.some(
        (k) =>
          (start >= k.end && start - k.end <= AFTER_KEYWORD && !SENTENCE_END.test(masked.slice(k.end, start))) ||
          (end <= k.start && k.start - end <= BEFORE_KEYWORD && !/[.!?\n]/.test(masked.slice(end, k.start))),
      );
      if (adjacent) nearKeyword.push(token);
      else if (/^\d{4,8}$/.test(token) && !/^(19|20)\d\d$/.test(token)) bare.push(token);
    }
  }
  return [...new Set([...nearKeyword, ...bare])];
}

function linkifyAll(text: string): string[] {
  return (linkify.match(text) ?? []).map((m) => m.url);
}

function normalizeUrl(candidate: string): string | undefined {
  const trimmed = candidate.trim();
  if (!/^https?:\/\//i.test(trimmed)) return undefined;
  try {
    return new URL(trimmed).href;
  } catch {
    return undefined;
  }
}

// Links and addresses become spaces of the same length, so offsets stay put
// and a code written right after a link is still found.
function maskLinksAndAddresses(text: string): string {
  let masked = text;
  for (const m of linkify.match(text) ?? []) {
    masked = masked.slice(0, m.index) + ' '.repeat(m.lastIndex - m.index) + masked.slice(m.lastIndex);
  }
  return masked.replace(/[^\s<>()"',;]+@[^\s<>()"',;]+/g, (s) => ' '.repeat(s.length));
}

const SKIPPED = new Set(['script', 'style', 'head', 'title']);
const BLOCKS = new Set(['p', 'div', 'br', 'tr', 'li', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'blockquote', 'pre', 'hr']);
const CELLS = new Set(['td', 'th']);

// Text arrives from the parser in pieces (entities may split it), so pieces
// are joined up to the next tag before anyone looks for URLs in them.
interface HtmlVisitor {
  readonly onHref?: (href: string) => void;
  readonly onText: (text: string) => void;
  /** An anchor's href and its words, once it closes. */
  readonly onAnchor?: (href: string, words: string) => void;
}

function walkHtml(html: string, on: HtmlVisitor): void {
  let skipping = 0;
  let pending = '';
  let anchor: { href: string; words: string } | undefined;
  const flush = (separator = '') => {
    const text = pending + separator;
    pending = '';
    if (text) on.onText(text);
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        flush(BLOCKS.has(name) ? '\n' : CELLS.has(name) ? ' ' : '');
        if (SKIPPED.has(name)) skipping++;
        if ((name === 'a' || name === 'area') && attributes.href !== undefined) on.onHref?.(attributes.href);
        if (name === 'a' && attributes.href !== undefined) anchor = { href: attributes.href, words: '' };
        if (name === 'img' && anchor && attributes.alt) anchor.words += ` ${attributes.alt} `;
      },
      onclosetag(name) {
        flush(BLOCKS.has(name) ? '\n' : '');
        if (name === 'a' && anchor) {
          on.onAnchor?.(anchor.href, anchor.words);
          anchor = undefined;
        }
        if (SKIPPED.has(name)) skipping = Math.max(0, skipping - 1);
      },
      ontext(text) {
        if (skipping === 0) pending += text;
        if (skipping === 0 && anchor) anchor.words += text;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  flush();
}
