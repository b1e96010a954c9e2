// One pass over a mail's HTML for the checks that read its elements: the
// links with the text a person sees on them, the images, and where each is
// (a line and the tag itself), so a problem can point at the markup to fix.
// The pass takes time in proportion to the HTML: a line is found in an index
// built once (line-index.ts), and only for the tags a check can report (an
// <a> with an href, an <img>), never for every tag; and the reading stops
// at an element nested past MAX_HTML_DEPTH (bounds.ts), where the parser's
// own work per element would grow with the depth.
import { Parser } from 'htmlparser2';
import { MAX_HTML_DEPTH } from './bounds.js';
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

export interface HtmlReading {
  readonly links: readonly HtmlLink[];
  readonly images: readonly HtmlImage[];
  /** Whether `<body>` carries attributes (a background colour, a style) that a client dropping it loses. */
  readonly bodyHasAttributes: boolean;
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
  let bodyHasAttributes = false;
  let open: { href: string; text: string; where: string } | undefined;
  let skipping = 0;
  let depth = 0;
  let tooDeep: string | undefined;
  const where = () => whereIs(html, lines, parser.startIndex, parser.endIndex);
  const parser: Parser = new Parser(
    {
      onopentag(name, attributes) {
        if (++depth > MAX_HTML_DEPTH) {
          tooDeep ??= where();
          return parser.pause();
        }
        if (name === 'script' || name === 'style') skipping++;
        if (name === 'body') bodyHasAttributes = Object.keys(attributes).length > 0;
        if (name === 'a' && attributes.href !== undefined) open = { href: attributes.href.trim(), text: '', where: where() };
        if (name === 'img') {
          images.push({ src: (attributes.src ?? '').trim(), alt: attributes.alt ?? null, where: where() });
          if (open && attributes.alt) open.text += ` ${attributes.alt} `;
        }
      },
      ontext(text) {
        if (open && skipping === 0) open.text += text;
      },
      onclosetag(name) {
        depth--;
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
  return { links, images, bodyHasAttributes, tooDeep, lines };
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
