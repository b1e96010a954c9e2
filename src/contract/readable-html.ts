// A mail's HTML as a person reads it, for a snapshot a reviewer can diff:
// the text in reading order, one block a line and a blank line between
// paragraphs, headings and list items marked as Markdown marks them, each
// link's target after its words (`Confirm my email <https://…>`) and each
// image by its alt text. What only styles the mail (its CSS, its layout
// tables' nesting, the invisible padding of a preheader) leaves no trace, so
// a snapshot changes when what the reader sees or can click changes, not
// when a framework upgrade reshuffles markup. `htmlToText` (extract.ts) is
// the flat text the code search reads; this one keeps the shape.
import { Parser } from 'htmlparser2';

const SKIPPED = new Set(['script', 'style', 'head', 'title', 'template']);
// A blank line before and after: what a reader sees as a paragraph of its own.
const PARAGRAPHS = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'blockquote', 'pre', 'hr', 'table']);
// A line of its own.
const LINES = new Set(['div', 'tr', 'li', 'section', 'article', 'header', 'footer', 'center', 'address', 'dt', 'dd', 'figure', 'figcaption', 'main', 'nav']);
const CELLS = new Set(['td', 'th']);
// Where blocks start and end, written as marks and turned into line ends
// at the end (`tidy`): a run of them is one line end, or a blank line when
// a paragraph or two <br> are among them, so nested blocks (an <li> in a
// <ul>, a <p> in a <td>) never stack blank lines. The marks, and a space
// inside <pre> that `tidy` must not collapse, are private-use characters,
// taken out of the mail's own text first.
const LINE = '\ue001';
const PARAGRAPH = '\ue002';
const BREAK = '\ue003';
const BREAKS = /[\ue001-\ue003][\t \ue001-\ue003]*/g;
const KEPT_SPACE = '\ue000';
const MARKS = /[\ue000-\ue003]/g;
// Characters that take no room: zero-width spaces and joiners, direction
// marks, the combining grapheme joiner and soft hyphen React Email and
// others pad the preheader with, a byte-order mark, Hangul fillers.
const INVISIBLE = /\u034f|\u115f|\u1160|\u17b4|\u17b5|\u3164|\uffa0|[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f\ufeff]/g;

interface OpenLink {
  readonly href: string;
  /** Where its words start: an index into the parts, and the length written before them. */
  readonly part: number;
  readonly written: number;
}

/**
 * The readable text of an HTML part: blocks on lines of their own,
 * paragraphs apart, `#` before headings, `-` or `1.` before list items,
 * `words <href>` for links (just `<href>` when the words are the address
 * itself), `[image: alt]` for images (nothing for an empty alt, which marks
 * a decorative image; `[image]` when there is no alt at all).
 */
export function readableHtml(html: string): string {
  // Parts joined once at the end: slicing a string that grows by `+=` would
  // flatten it at every link, quadratic in a mail with many links.
  const parts: string[] = [];
  let written = 0;
  let skipping = 0;
  let preformatted = 0;
  const links: OpenLink[] = [];
  const lists: { ordered: boolean; count: number }[] = [];
  const write = (text: string) => {
    parts.push(text);
    written += text.length;
  };
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (SKIPPED.has(name)) skipping++;
        if (skipping > 0) return;
        if (PARAGRAPHS.has(name)) write(PARAGRAPH);
        else if (LINES.has(name)) write(LINE);
        else if (CELLS.has(name)) write(' ');
        if (name === 'br') write(BREAK);
        if (name === 'pre') preformatted++;
        if (name === 'hr') write('---');
        if (/^h[1-6]$/.test(name)) write(`${'#'.repeat(Number(name[1]))} `);
        if (name === 'ul' || name === 'ol') lists.push({ ordered: name === 'ol', count: 0 });
        if (name === 'li') {
          const list = lists.at(-1);
          if (list) list.count++;
          write(list?.ordered ? `${list.count}. ` : '- ');
        }
        if (name === 'img') {
          const alt = attributes.alt;
          if (alt === undefined) write(' [image] ');
          else if (alt.trim() !== '') write(` [image: ${alt.trim()}] `);
        }
        if (name === 'a' || name === 'area') links.push({ href: (attributes.href ?? '').trim(), part: parts.length, written });
        if (name === 'area' && attributes.alt) write(attributes.alt);
      },
      onclosetag(name) {
        if (SKIPPED.has(name)) {
          skipping = Math.max(0, skipping - 1);
          return;
        }
        if (skipping > 0) return;
        if (name === 'a' || name === 'area') {
          const link = links.pop();
          if (link) write(linkTarget(link.href, wordsOf(link)));
        }
        if (name === 'pre') preformatted = Math.max(0, preformatted - 1);
        if (name === 'ul' || name === 'ol') lists.pop();
        if (PARAGRAPHS.has(name)) write(PARAGRAPH);
        else if (LINES.has(name)) write(LINE);
      },
      ontext(text) {
        if (skipping > 0) return;
        // Any run of spaces (no-break ones too) is one space, as a browser shows it, but in <pre>.
        // An icon font's glyph in the marks' range is dropped: it has no words either.
        const own = text.replace(MARKS, '');
        write(preformatted > 0 ? own.replace(/[ \t]/g, KEPT_SPACE) : own.replace(/\s+/g, ' '));
      },
    },
    { decodeEntities: true },
  );
  // A link's words, squeezed to one line; only as many as could still read
  // as its address: longer words are never the address itself, and reading
  // them all would be quadratic when links are left open and nest.
  const wordsOf = (link: OpenLink): string => {
    const length = written - link.written;
    if (length > link.href.length * 2 + 64) return LONG_WORDS;
    return squeeze(
      parts
        .slice(link.part)
        .join('')
        .replace(/[\ue000-\ue003]/g, ' '),
    );
  };
  parser.write(html);
  parser.end();
  return tidy(parts.join(''));
}

// The words of a link too long to be its address: not empty, and never equal to it.
const LONG_WORDS = '\u2026';

/** What follows a link's words: its target, unless the words already are it or it goes nowhere. */
function linkTarget(href: string, words: string): string {
  if (href === '' || href.startsWith('#') || /^javascript:/i.test(href)) return '';
  const bare = (url: string) => url.replace(/^mailto:/i, '').replace(/\/$/, '');
  if (words !== '' && bare(words) === bare(href)) return '';
  return words === '' ? ` <${href}> ` : ` <${href}>`;
}

/** The link's words as one line: what the link says, without the layout around it. */
function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// Marks to line ends, spaces collapsed within each line (a preformatted
// one survives as KEPT_SPACE until here), no line starting or ending in
// spaces, at most one blank line in a row, none at either end.
function tidy(text: string): string {
  return text
    .replace(INVISIBLE, '')
    .replace(BREAKS, (run) => (run.includes(PARAGRAPH) || run.split(BREAK).length > 2 ? '\n\n' : '\n'))
    .split('\n')
    .map((line) =>
      line
        .replace(/[ \t]+/g, ' ')
        .trim()
        .replaceAll(KEPT_SPACE, ' ')
        .trimEnd(),
    )
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
