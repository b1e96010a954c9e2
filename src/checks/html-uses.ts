// What a mail does with a feature at one place, so a finding is kept only
// where it fits the mail, and a caniemail note only where it applies to
// it. caniemail finds features by name, so it also finds what is not
// there: `border` in `border-radius`, `background` in `background-color`,
// `<body>` in `<tbody>`, `<p>` in `<span>`; and each of its notes is about
// one case (`margin`'s "Negative values are not supported", `lang`'s "Not
// supported on `<td>` elements"), shown before whatever the mail used.
import type { FeatureData } from './caniemail-data.js';
import { parseDeclarations, plainValue, type Declaration } from './css-declarations.js';
import type { Place } from './html-findings.js';
import type { HtmlElement, HtmlReading } from './html-reading.js';

export interface Use {
  /** The element, for a feature of the markup or an inline style. */
  readonly element: HtmlElement | undefined;
  /** The declarations that use the feature (none for a feature of the markup or a selector). */
  readonly declarations: readonly Declaration[];
  /** The rule's selector, for a feature of a <style> block's rule. */
  readonly selector: string | undefined;
  readonly inStyleBlock: boolean;
  readonly reading: HtmlReading;
}

/** The property names of caniemail's CSS features whose title is not the property itself. */
const PROPERTIES: Readonly<Record<string, readonly string[]>> = {
  'left, right, top, bottom': ['left', 'right', 'top', 'bottom'],
  'gap, column-gap, row-gap': ['gap', 'column-gap', 'row-gap'],
  'css column properties': ['columns', 'column-count', 'column-fill', 'column-gap', 'column-rule', 'column-span', 'column-width'],
  'grid-template-* properties': ['grid-template', 'grid-template-areas', 'grid-template-columns', 'grid-template-rows'],
  'block-size & inline-size': ['block-size', 'inline-size'],
  'color-scheme CSS property': ['color-scheme'],
};

/** A CSS feature's properties: `border-radius` → ['border-radius'], `height property` → ['height']. */
function propertiesOf(title: string): readonly string[] {
  const listed = PROPERTIES[title];
  if (listed) return listed;
  const name = title.replace(/ (property|shorthand)$/, '').trim();
  return /^[a-z-]+$/.test(name) ? [name] : [];
}

let ownTitles: ReadonlySet<string> | undefined;
/** The properties that are a caniemail feature of their own (`border-radius`, `background-color`): not a use of the shorthand they start with. */
function hasOwnFeature(property: string, features: Iterable<FeatureData>): boolean {
  ownTitles ??= new Set([...features].filter((f) => f.category === 'css').flatMap((f) => propertiesOf(f.title)));
  return ownTitles.has(property);
}

/** The declarations of a place that use a CSS feature, as the mail wrote them. */
function declarationsUsing(feature: FeatureData, declarations: readonly Declaration[], features: Iterable<FeatureData>): Declaration[] {
  const title = feature.title;
  const pair = /^([a-z-]+):\s*([a-z-]+)$/.exec(title);
  if (pair) return declarations.filter((d) => d.property === pair[1] && plainValue(d.value) === pair[2]);
  // `display:flex`, `display:grid` and `display:none` are features of their own.
  if (title === 'display') return declarations.filter((d) => d.property === 'display' && !['flex', 'grid', 'none'].includes(plainValue(d.value)));
  const properties = propertiesOf(title);
  if (properties.length > 0) {
    return declarations.filter((d) => properties.some((p) => d.property === p || (d.property.startsWith(`${p}-`) && !hasOwnFeature(d.property, features))));
  }
  const fn = /^(?:CSS )?([a-z-]+)\(\)/.exec(title);
  if (fn) return declarations.filter((d) => new RegExp(`(^|[^a-z-])${fn[1]}\\(`, 'i').test(d.value));
  if (title === 'CSS Variables (Custom Properties)') return declarations.filter((d) => d.property.startsWith('--') || /var\(/i.test(d.value));
  const unit = /^(\S+) unit$/.exec(title);
  if (unit) return declarations.filter((d) => new RegExp(`\\d${unit[1]!.replace('%', '%')}`).test(d.value));
  if (title === '!important keyword') return declarations.filter((d) => /!\s*important/i.test(d.value));
  // Values (`system-ui`, `fit-content`), images in url(): caniemail matched on the value.
  return [...declarations];
}

/** What the mail does with `feature` at `place`; undefined when caniemail found something the mail does not use there. */
export function useAt(feature: FeatureData, place: Place, reading: HtmlReading, features: Iterable<FeatureData>): Use | undefined {
  if (place.kind === 'stylesheet') return { element: undefined, declarations: [], selector: undefined, inStyleBlock: true, reading };
  if (place.kind === 'css') {
    const brace = place.text.indexOf('{');
    if (brace !== -1) return { element: undefined, declarations: [], selector: place.text.slice(0, brace).trim(), inStyleBlock: true, reading };
    const declarations = feature.category === 'css' && !place.text.startsWith('/*') ? parseDeclarations(place.text) : [];
    const used = declarations.length > 0 ? declarationsUsing(feature, declarations, features) : [];
    if (declarations.length > 0 && used.length === 0) return undefined;
    return { element: undefined, declarations: used, selector: place.selector, inStyleBlock: true, reading };
  }
  const element = place.element;
  if (element === undefined) return { element, declarations: [], selector: undefined, inStyleBlock: false, reading };
  if (feature.category === 'css' && feature.title !== 'CSS comments') {
    const used = declarationsUsing(feature, element.style, features);
    return used.length === 0 ? undefined : { element, declarations: used, selector: undefined, inStyleBlock: false, reading };
  }
  return elementFits(feature.title, element) ? { element, declarations: [], selector: undefined, inStyleBlock: false, reading } : undefined;
}

const TAGS: Readonly<Record<string, readonly string[]>> = {
  'HTML5 semantics': ['article', 'aside', 'details', 'figcaption', 'figure', 'footer', 'header', 'main', 'mark', 'nav', 'section', 'summary', 'time'],
  '<ul>, <ol> and <dl>': ['ul', 'ol', 'dl'],
  '<h1> to <h6> elements': ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
  'Image maps': ['map', 'img'],
  address: ['address'],
};

/** caniemail matches an element title on any tag that contains it (`<body>` in `<tbody>`, `<p>` in `<span>`): the tag must be the one named. */
function elementFits(title: string, element: HtmlElement): boolean {
  // An <image> in an inline <svg> is the svg's own problem (html-content.ts).
  if (title === 'Embedded <svg> image') return !element.inSvg;
  // `href="#"` is a placeholder, not an anchor: the links check reports the missing URL.
  if (title === 'Local anchors') return (element.attributes.href ?? '').trim() !== '#';
  const tags = TAGS[title] ?? (/^<(\w+)[ >]/.exec(title) ? [/^<(\w+)/.exec(title)![1]!] : undefined);
  return tags === undefined || tags.includes(element.name);
}

/**
 * Whether a caniemail note applies to this use: `true`, `false`, or
 * `'lacks'` when it says the very value used is not supported (Yahoo's
 * "Supports `relative` but not `absolute`" for `position:absolute`).
 * A note no rule knows is taken as applying.
 */
export function noteApplies(note: string, use: Use): boolean | 'lacks' {
  const values = use.declarations.map((d) => plainValue(d.value));
  const context: NoteContext = { use, note, any: (test) => values.some(test) };
  for (const [pattern, applies] of NOTE_RULES) if (pattern.test(note)) return applies(context);
  return true;
}

interface NoteContext {
  readonly use: Use;
  readonly note: string;
  /** Whether any value the mail uses passes the test (plain: lower case, no !important). */
  readonly any: (test: (value: string) => boolean) => boolean;
}

type NoteRule = readonly [RegExp, (context: NoteContext) => boolean | 'lacks'];

const NOTE_RULES: readonly NoteRule[] = [
  // `position` in each client: the values it lacks are listed after "not".
  [/Supports `\w+`(?:, `\w+`)* but not/, ({ note, any }) => lacksListed(note, any)],
  [/Negative values are not supported/, ({ any }) => any((v) => /(^|[\s(,])-\.?\d/.test(v))],
  [/`rem` values are not supported|Does not support `rem`/, ({ any }) => any((v) => /\drem\b/.test(v))],
  [/`relative` and `percentage` size values not supported/, ({ any }) => any((v) => /%|\b(smaller|larger)\b|\d(em|rem)\b/.test(v))],
  [/Not supported with multiple values/, ({ any }) => any((v) => (v.match(/\b(underline|overline|line-through)\b/g) ?? []).length > 1)],
  [/`overline` is not supported/, ({ any }) => any((v) => v.includes('overline'))],
  [/Does not support multiple values/, ({ any }) => any((v) => topLevelComma(v))],
  [/Does not support the `\/ value` shorthand/, ({ any }) => any((v) => v.includes('/') && !/url\(/.test(v.replace(/url\([^)]*\)/g, '')))],
  [/Only `background-color` values are supported/, ({ any }) => (any((v) => !isOnlyColour(v)) ? 'lacks' : false)],
  [/Only supports `display:none`/, ({ any }) => (any((v) => v !== 'none') ? 'lacks' : false)],
  [/`display:none` does not inherit|Does not inherit onto nested `<table>`/, () => false],
  [/Does not work when applied directly to an `<img>`/, ({ use }) => use.element?.name === 'img'],
  [/`flex`, `grid`, .* not supported with non Google accounts/, ({ any }) => any((v) => /flex|grid|contents|flow-root|initial|revert|unset/.test(v))],
  [/`flow-root`, `inline-flex`/, ({ any }) => any((v) => /flow-root|inline-flex|inline-grid|inline flow|contents|revert/.test(v))],
  [/`display:inline-flex` is not supported/, ({ any }) => any((v) => v.includes('inline-flex'))],
  [/Not supported on `<td>` elements/, ({ use }) => use.element?.name === 'td'],
  [/Only works on the `<table>` tag/, ({ use }) => use.element !== undefined && use.element.name !== 'table'],
  [/Only works on `<table>` elements/, ({ use }) => notOnTag(use, ['div', 'p', 'span', 'img', 'td', 'th', 'a', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'])],
  // A phone is narrower than the width a mail caps its table at.
  [/Doesn't work on `<table>` elements/, () => false],
  [
    /Percentage width on `<img>`/,
    ({ use, any }) => use.element?.name === 'img' && (any((v) => v.includes('%')) || (use.element.attributes.width ?? '').includes('%')),
  ],
  [/don't scale in 120 dpi mode/, () => false],
  [/Only supported on table cells/, ({ use }) => use.element !== undefined && !['td', 'th'].includes(use.element.name) && !use.reading.msoTables],
  [/Vertical padding will be the same for all cells/, () => false],
  [
    /Not supported on `<body>`, `<span>`, `<div>` or `<p>`|Not supported on `<body>`, `<span>`, `<div>`, `<p>` or `<img>`/,
    ({ use }) => notOnTag(use, ['span', 'div', 'p', 'img']),
  ],
  [/Not supported on `<span>` and `<body>`/, ({ use }) => use.element !== undefined && ['span', 'body'].includes(use.element.name)],
  [/`auto` value is not supported/, ({ use, any }) => any((v) => /\bauto\b/.test(v)) && !use.reading.msoTables && use.element?.attributes.align !== 'center'],
  // A table left unaligned stays on the left: only `right` is lost.
  [/`left` and `right` do not work on `<table>`/, ({ use }) => use.element?.name === 'table' && /^right$/i.test(use.element.attributes.align ?? '')],
  [/Supports the vendor prefixed value|Support of the `match-parent` value depends/, () => false],
  // A minimum height is the height, unless the content is taller and was to be cut.
  [
    /Replaces `height` by `min-height`/,
    ({ use }) => use.element !== undefined && use.element.style.some((d) => d.property === 'overflow' && plainValue(d.value) === 'hidden'),
  ],
  [/elliptical borders with the slash/, ({ any }) => any((v) => v.includes('/'))],
  [/`background-color` is included inside the `margin`/, () => false],
  [/A border can not be bigger than 8px/, ({ any }) => any((v) => [...v.matchAll(/(\d+(?:\.\d+)?)px/g)].some((m) => Number(m[1]) > 8))],
  [/Unreliable if used on a `<p>` or a `<div>`/, ({ use }) => use.element !== undefined && ['p', 'div'].includes(use.element.name)],
  [/`em` and `px` units behave weirdly/, () => false],
  [/Big negative values/, ({ any }) => any((v) => /-([1-9]\d*(\.\d+)?px|0?\.[1-9]\d*em|[1-9]\d*(\.\d+)?em)/.test(v))],
  [/Values set in `em` are smaller/, ({ any }) => any((v) => /\dem\b/.test(v))],
  // Outlook shows a number weight as normal or bold, the nearer of the two; Yahoo takes the hundreds.
  [/`<number>` values between 0 and 599/, () => false],
  [/`<number>` values are not supported as per CSS Fonts Level 4/, ({ any }) => any((v) => /^\d+$/.test(v) && Number(v) % 100 !== 0)],
  [/Doesn't support the `match-parent` value/, ({ any }) => any((v) => v.includes('match-parent'))],
  [/Flow-relative values `start` and `end`/, ({ any }) => any((v) => v === 'start' || v === 'end')],
  [/Logical property values `inline-start` and `inline-end`/, ({ any }) => any((v) => /inline-(start|end)/.test(v))],
  [/`lowercase` value is not supported/, ({ any }) => any((v) => v === 'lowercase')],
  [
    /Only supported in lowercase/,
    ({ use }) => use.declarations.some((d) => /!\s*important/.test(d.value) && !/!\s*important/.test(d.value.replace(/!\s*IMPORTANT/g, ''))),
  ],
  [/Only supported with a space before/, ({ use }) => use.declarations.some((d) => /[^\s]!important/i.test(d.value))],
  [/Not supported inline/, ({ use }) => !use.inStyleBlock],
  [
    /Removed if there is no space before when used with a `background-image`/,
    ({ use }) => use.declarations.some((d) => d.property.startsWith('background') && /[^\s]!important/i.test(d.value)),
  ],
  [/Only supported inline when using a Non Gmail Account/, () => false],
  [/Whitespace syntax is not supported|whitespace syntax/, ({ any }) => any((v) => /rgba?\(\s*[\d.]+%?\s+[\d.]/.test(v))],
  [/Alpha value is not supported/, ({ any }) => any((v) => /rgb\(([^,)]*,){3}/.test(v))],
  [/`reversed` attribute on `<ol>`/, ({ use }) => use.element?.attributes.reversed !== undefined],
  [/Setting the `value` attribute to an `<li>`/, () => false],
  [/`bcc` is not supported/, ({ use }) => /bcc=/i.test(use.element?.attributes.href ?? '')],
  [/`pre` value is not supported/, ({ any }) => any((v) => v === 'pre')],
  [/Not supported inside the `<body>`/, ({ use }) => use.element !== undefined && use.reading.styleBlocks.some((block) => block.inBody)],
  [/is limited to 16 KB/, ({ use }) => use.reading.styleBlocks.some((block) => block.css.length > 16 * 1024)],
  [/`<style>` elements need to be declared before their rules are used/, ({ use }) => use.reading.styleBlocks.some((block) => block.inBody)],
  [/Buggy on anchor `<a>` tags/, ({ use }) => use.element?.name === 'a'],
  [/Only supported on the `<body>` element/, ({ use }) => use.element !== undefined && use.element.name !== 'body'],
  [/Requires a background on the `<body>`/, ({ use }) => !use.reading.bodyBackgroundAlone],
  [/Does not support animated gif|plays the animation 3 times/, () => false],
  [/Replaced by a `<div>` with supported attributes/, () => false],
  [/distant fonts are ignored/, () => 'lacks'],
  [/Not supported, but .* can be used instead|can be used in VML|can use an `align` attribute/, () => 'lacks'],
];

/** A note listing the values a client lacks (`… but not `relative`, `absolute` and `fixed``): 'lacks' when the mail uses one, else it does not apply. */
function lacksListed(note: string, any: NoteContext['any']): boolean | 'lacks' {
  const listed = [...(/but not (.*)$/.exec(note)?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  return any((value) => listed.includes(value)) ? 'lacks' : false;
}

/**
 * Whether a size Outlook ignores on these tags matters: not on an <img>
 * or a cell that has its width attribute (Outlook sizes it by that), nor
 * on <body> (which fills the window), nor where the mail gives Outlook
 * ghost tables of its own.
 */
function notOnTag(use: Use, tags: readonly string[]): boolean {
  const element = use.element;
  if (element === undefined || !tags.includes(element.name) || use.reading.msoTables) return false;
  if (['img', 'td', 'th'].includes(element.name)) return element.attributes.width === undefined && !element.style.some((d) => d.property === 'width');
  return true;
}

function topLevelComma(value: string): boolean {
  let depth = 0;
  for (const c of value) {
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) return true;
  }
  return false;
}

function isOnlyColour(value: string): boolean {
  return /^(#[0-9a-f]{3,8}|(rgba?|hsla?)\([^)]*\)|[a-z]+)$/.test(value);
}
