// One pass over a mail's HTML for the checks that read its elements: the
// links with the text a person sees on them, the images, and where each is
// (a line and the tag itself), so a problem can point at the markup to fix;
// and, for the html check, each element with what it is inside of (a
// table, a hidden preheader, a part Outlook for Windows never sees), the
// <style> blocks, and the Outlook fallbacks in conditional comments, so a
// feature is judged by what it does in this mail (html-effects.ts).
// The pass takes time in proportion to the HTML: a line is found in an index
// built once (line-index.ts), and only for the tags a check can report (an
// <a> with an href, an <img>), never for every tag; and the reading stops
// at an element nested past MAX_HTML_DEPTH (bounds.ts), where the parser's
// own work per element would grow with the depth.
import { Parser } from 'htmlparser2';
import { MAX_HTML_DEPTH } from './bounds.js';
import { parseDeclarations, plainValue } from './css-declarations.js';
import { LineIndex } from './line-index.js';

export interface HtmlLink {
  readonly href: string;
  /** The anchor's visible text (an image's alt when it is an image link), whitespace folded. */
  readonly text: string;
  readonly where: string;
}

export interface HtmlImage {
  readonly src: string;
  /** null when the tag has no `alt` at all (`alt=""` is a decorative image, which is fine). */
  readonly alt: string | null;
  readonly where: string;
}

/** An element as the html check sees it, found by where its tag starts. */
export interface HtmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Its style attribute, read. */
  readonly style: ReturnType<typeof parseDeclarations>;
  /** A <table> is around it: a layout that does not hang on it alone. */
  readonly inTable: boolean;
  /** An <svg> is around it. */
  readonly inSvg: boolean;
  /** It or an element around it is hidden (display:none, visibility:hidden, opacity:0, a zero max-height, mso-hide:all): a preheader, or a part for other clients. */
  readonly hidden: boolean;
  /** Inside `<!--[if !mso]><!-->…<!--<![endif]-->`: Outlook for Windows never sees it. */
  readonly notMso: boolean;
  /** For an element with a background image and no colour behind it: whether text is inside it. */
  readonly hasText: boolean;
}

/** A <style> block: where its CSS starts and ends in the HTML. */
export interface StyleBlock {
  readonly start: number;
  readonly css: string;
  readonly inBody: boolean;
}

export interface HtmlReading {
  readonly links: readonly HtmlLink[];
  readonly images: readonly HtmlImage[];
  /** Each element, by the offset of its `<`. */
  readonly elements: ReadonlyMap<number, HtmlElement>;
  readonly styleBlocks: readonly StyleBlock[];
  /** The elements inside <body> (all of them without one): what a feature's use is weighed against in the support score. */
  readonly bodyElements: number;
  /** `<body>` sets a background colour or image that no other element repeats, so a client that drops <body> loses it. */
  readonly bodyBackgroundAlone: boolean;
  /** The mail carries its styles inline (as many elements have a style attribute as a class): a client without <style> still shows it styled. */
  readonly inlineStyled: boolean;
  /** The mail gives Outlook for Windows tables of its own in `<!--[if mso]>` comments (ghost tables, as MJML and Cerberus do). */
  readonly msoTables: boolean;
  /** The mail gives Outlook for Windows VML backgrounds in `<!--[if mso]>` comments. */
  readonly vmlBackgrounds: boolean;
  /** Where the first element nested past MAX_HTML_DEPTH is, when one is: the reading stopped there, so the checks refuse it. */
  readonly tooDeep: string | undefined;
  /** The HTML's lines, for the html check's positions. */
  readonly lines: LineIndex;
}

const EXCERPT_CHARS = 100;

export function readHtml(html: string): HtmlReading {
  const links: HtmlLink[] = [];
  const images: HtmlImage[] = [];
  const lines = new LineIndex(html);
  const elements = new Map<number, HtmlElement & { hasText: boolean }>();
  const styleBlocks: StyleBlock[] = [];
  const stack: (HtmlElement & { hasText: boolean })[] = [];
  let textTakers: (HtmlElement & { hasText: boolean })[] = [];
  let open: { href: string; text: string; where: string } | undefined;
  let skipping = 0;
  let tooDeep: string | undefined;
  let notMso = 0;
  let inBody = false;
  let bodyElements = 0;
  let allElements = 0;
  let styled = 0;
  let classed = 0;
  let bodyBackground = false;
  let otherBackgrounds = 0;
  let msoTables = false;
  let vmlBackgrounds = false;
  let styleStart = -1;
  const where = () => whereIs(html, lines, parser.startIndex, parser.endIndex);
  const parser: Parser = new Parser(
    {
      onopentag(name, attributes) {
        const parent = stack.at(-1);
        const style = parseDeclarations(attributes.style ?? '');
        const element = {
          name,
          attributes,
          style,
          inTable: (parent?.inTable ?? false) || parent?.name === 'table',
          inSvg: (parent?.inSvg ?? false) || parent?.name === 'svg',
          hidden: (parent?.hidden ?? false) || hides(style),
          notMso: notMso > 0,
          hasText: false,
        };
        stack.push(element);
        if (stack.length > MAX_HTML_DEPTH) {
          tooDeep ??= where();
          return parser.pause();
        }
        elements.set(parser.startIndex, element);
        allElements++;
        if (inBody) bodyElements++;
        if (attributes.style !== undefined) styled++;
        if (attributes.class !== undefined) classed++;
        if (hasBackground(attributes, style)) {
          if (name === 'body') bodyBackground = !isWhite(attributes, style);
          else otherBackgrounds++;
          if (hasBackgroundImage(attributes, style) && !hasBackgroundColour(attributes, style)) textTakers.push(element);
        }
        if (name === 'body') inBody = true;
        if (name === 'style') styleStart = parser.endIndex + 1;
        if (name === 'script' || name === 'style') skipping++;
        if (name === 'a' && attributes.href !== undefined) open = { href: attributes.href.trim(), text: '', where: where() };
        if (name === 'img') {
          images.push({ src: (attributes.src ?? '').trim(), alt: attributes.alt ?? null, where: where() });
          if (open && attributes.alt) open.text += ` ${attributes.alt} `;
        }
      },
      ontext(text) {
        if (open && skipping === 0) open.text += text;
        if (skipping === 0 && textTakers.length > 0 && /\S/.test(text)) for (const taker of textTakers) taker.hasText = true;
      },
      oncomment(comment) {
        // `<!--[if !mso]><!-->` opens a part Outlook for Windows skips, `<!--<![endif]-->` closes it.
        if (/^\[if\s+!mso/i.test(comment)) notMso++;
        else if (/^<!\[endif\]$/.test(comment.trim())) notMso = Math.max(0, notMso - 1);
        else if (/^\[if\s[^\]]*mso/i.test(comment)) {
          if (/<table\b/i.test(comment)) msoTables = true;
          if (/<v:(fill|image|rect|background)\b/i.test(comment)) vmlBackgrounds = true;
        }
      },
      onclosetag(name) {
        const element = stack.pop();
        if (element) textTakers = textTakers.filter((taker) => taker !== element);
        if (name === 'style' && styleStart !== -1) {
          styleBlocks.push({ start: styleStart, css: html.slice(styleStart, parser.startIndex), inBody });
          styleStart = -1;
        }
        if (name === 'script' || name === 'style') skipping = Math.max(0, skipping - 1);
        if (name === 'a' && open) {
          links.push({ href: open.href, text: fold(open.text), where: open.where });
          open = undefined;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return {
    links,
    images,
    elements,
    styleBlocks,
    bodyElements: inBody ? bodyElements : allElements,
    bodyBackgroundAlone: bodyBackground && otherBackgrounds === 0,
    inlineStyled: styled > 0 && styled >= classed,
    msoTables,
    vmlBackgrounds,
    tooDeep,
    lines,
  };
}

type Style = ReturnType<typeof parseDeclarations>;
const valueOf = (style: Style, property: string) => {
  const found = style.findLast((d) => d.property === property);
  return found === undefined ? undefined : plainValue(found.value);
};

/** Styles that hide an element (a preheader's, or a part meant for other clients). */
function hides(style: Style): boolean {
  return (
    valueOf(style, 'display') === 'none' ||
    valueOf(style, 'visibility') === 'hidden' ||
    valueOf(style, 'opacity') === '0' ||
    valueOf(style, 'mso-hide') === 'all' ||
    /^0(px)?$/.test(valueOf(style, 'max-height') ?? '')
  );
}

const COLOUR = /#[0-9a-f]{3,8}\b|\b(rgba?|hsla?)\(|\b(white|black|red|green|blue|gray|grey|silver|navy|orange|yellow|purple|teal|maroon)\b/i;

function hasBackgroundImage(attributes: Record<string, string>, style: Style): boolean {
  return (
    (attributes.background ?? '') !== '' || style.some((d) => (d.property === 'background' || d.property === 'background-image') && /url\(/i.test(d.value))
  );
}

function hasBackgroundColour(attributes: Record<string, string>, style: Style): boolean {
  return (
    (attributes.bgcolor ?? '') !== '' ||
    style.some((d) => (d.property === 'background-color' && plainValue(d.value) !== 'transparent') || (d.property === 'background' && COLOUR.test(d.value)))
  );
}

/** A white background is what a client shows anyway. */
function isWhite(attributes: Record<string, string>, style: Style): boolean {
  const colours = [attributes.bgcolor ?? '', ...style.filter((d) => d.property.startsWith('background')).map((d) => plainValue(d.value))].filter(
    (c) => c !== '',
  );
  return colours.length > 0 && colours.every((c) => /^(#fff|#ffffff|white|rgb\(255, ?255, ?255\))$/i.test(c));
}

function hasBackground(attributes: Record<string, string>, style: Style): boolean {
  return hasBackgroundImage(attributes, style) || hasBackgroundColour(attributes, style);
}

/** `line 12: <img src="logo.png">`, the tag cut to a readable length. */
function whereIs(html: string, lines: LineIndex, start: number, end: number): string {
  return `line ${lines.lineOf(start)}: ${excerpt(html.slice(start, end + 1))}`;
}

/** A tag as a problem shows it: whitespace folded, cut to a readable length. */
export function excerpt(tag: string): string {
  const folded = tag.replace(/\s+/g, ' ');
  return folded.length > EXCERPT_CHARS ? `${folded.slice(0, EXCERPT_CHARS - 1)}…` : folded;
}

function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
