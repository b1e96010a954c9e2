// One pass over a mail's HTML for the checks that read its elements: the
// links with the text a person sees on them, the images, and where each is
// (a line and the tag itself), so a problem can point at the markup to fix.
import { Parser } from 'htmlparser2';

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
}

const EXCERPT_CHARS = 100;

export function readHtml(html: string): HtmlReading {
  const links: HtmlLink[] = [];
  const images: HtmlImage[] = [];
  let bodyHasAttributes = false;
  let open: { href: string; text: string; where: string } | undefined;
  let skipping = 0;
  const parser: Parser = new Parser(
    {
      onopentag(name, attributes) {
        const where = whereIs(html, parser.startIndex, parser.endIndex);
        if (name === 'script' || name === 'style') skipping++;
        if (name === 'body') bodyHasAttributes = Object.keys(attributes).length > 0;
        if (name === 'a' && attributes.href !== undefined) open = { href: attributes.href.trim(), text: '', where };
        if (name === 'img') {
          images.push({ src: (attributes.src ?? '').trim(), alt: attributes.alt ?? null, where });
          if (open && attributes.alt) open.text += ` ${attributes.alt} `;
        }
      },
      ontext(text) {
        if (open && skipping === 0) open.text += text;
      },
      onclosetag(name) {
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
  return { links, images, bodyHasAttributes };
}

/** `line 12: <img src="logo.png">`, the tag cut to a readable length. */
export function whereIs(html: string, start: number, end: number): string {
  const line = html.slice(0, start).split('\n').length;
  const tag = html.slice(start, end + 1).replace(/\s+/g, ' ');
  return `line ${line}: ${tag.length > EXCERPT_CHARS ? `${tag.slice(0, EXCERPT_CHARS - 1)}…` : tag}`;
}

function fold(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
