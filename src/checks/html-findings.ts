// Which caniemail features a mail uses, and where: caniemail reads the
// markup and the inline styles, and each <style> block on its own (the
// markup with the blocks' CSS blanked out, offsets kept), so that a feature
// in a <style> block points at its line of the HTML and at the declaration
// or rule that uses it, whichever block it is in. What each client does
// with a feature is judged after (html-effects.ts), from the data itself.
import type { Caniemail, FeatureData } from './caniemail-data.js';
import type { HtmlElement, HtmlReading, StyleBlock } from './html-reading.js';
import { LineIndex } from './line-index.js';

/** Where a feature is used: an element (its tag, an attribute, its style attribute), a rule or declaration of a <style> block, or a whole block (an at-rule). */
export type Place =
  | { readonly kind: 'element'; readonly offset: number; readonly element: HtmlElement | undefined }
  | { readonly kind: 'css'; readonly offset: number; readonly block: StyleBlock; readonly text: string; readonly selector: string }
  | { readonly kind: 'stylesheet'; readonly offset: number; readonly block: StyleBlock };

export interface Finding {
  readonly feature: FeatureData;
  readonly place: Place;
  /** Set by mailroom's own findings (html-content.ts), which know what they break. */
  readonly breaks?: string;
}

interface Position {
  readonly start: { readonly line: number; readonly column: number };
  readonly end?: { readonly line: number; readonly column: number };
}

type Issues = ReturnType<Caniemail['run']>['issues'];

export function findFeatures(caniemail: Caniemail, html: string, reading: HtmlReading, clients: readonly string[]): Finding[] {
  const globs = clients as Parameters<Caniemail['run']>[0]['clients'];
  const findings = new Map<string, Finding>();
  const add = (issues: Issues, placeOf: (position: Position | undefined) => Place) => {
    for (const list of [...issues.errors.values(), ...issues.warnings.values()]) {
      for (const issue of list) {
        const feature = caniemail.byTitle.get(issue.title);
        if (feature === undefined) continue;
        const place = placeOf(issue.position);
        findings.set(`${feature.slug}\n${place.kind}\n${place.offset}`, { feature, place });
      }
    }
  };

  const markup = blankStyleBlocks(html, reading.styleBlocks);
  add(caniemail.run({ clients: globs, html: markup }).issues, (position) => {
    const offset = position ? reading.lines.offsetOf(position.start.line, position.start.column) : 0;
    return { kind: 'element', offset, element: reading.elements.get(offset) };
  });
  for (const block of reading.styleBlocks) {
    if (block.css.trim() === '') continue;
    const lines = new LineIndex(block.css);
    add(caniemail.run({ clients: globs, css: block.css }).issues, (position) => {
      if (!position) return { kind: 'stylesheet', offset: block.start, block };
      const start = lines.offsetOf(position.start.line, position.start.column);
      const end = position.end ? lines.offsetOf(position.end.line, position.end.column) : start;
      return { kind: 'css', offset: block.start + start, block, text: block.css.slice(start, end), selector: selectorAround(block.css, start) };
    });
  }
  return [...findings.values()].sort((a, b) => a.place.offset - b.place.offset);
}

/** The selector of the rule a declaration at `offset` is in ('' at the top level). */
function selectorAround(css: string, offset: number): string {
  const open = css.lastIndexOf('{', offset);
  if (open === -1 || css.lastIndexOf('}', offset) > open) return '';
  const before = Math.max(css.lastIndexOf('}', open), css.lastIndexOf(';', open), css.lastIndexOf('{', open - 1));
  return css
    .slice(before + 1, open)
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .trim();
}

/** The HTML with each <style> block's CSS turned to spaces, its newlines kept, so every offset and line stays where it was. */
function blankStyleBlocks(html: string, blocks: readonly StyleBlock[]): string {
  let out = '';
  let at = 0;
  for (const block of blocks) {
    out += html.slice(at, block.start) + block.css.replace(/[^\n]/g, ' ');
    at = block.start + block.css.length;
  }
  return out + html.slice(at);
}
