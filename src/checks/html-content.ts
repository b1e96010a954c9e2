// What a mail depends on that caniemail has no entry for, or reads in no
// context: a <script> (Mailpit's html check reports it too), an <iframe>,
// <embed> or <canvas>, an inline <svg> (caniemail's "Embedded <svg> image"
// finds only an <image> inside one), and a web font the mail names with no
// other font to fall back on. Each is a finding the html check judges like
// caniemail's, and each breaks the mail where a client lacks it.
import type { Caniemail, FeatureData } from './caniemail-data.js';
import { parseDeclarations, plainValue } from './css-declarations.js';
import type { Finding } from './html-findings.js';
import type { HtmlReading } from './html-reading.js';

/** Elements no mail client shows or runs; caniemail has no entry for them, so none has a page. */
const NEVER_SHOWN: Readonly<Record<string, { slug: string; breaks: string }>> = {
  script: { slug: 'html-script', breaks: 'never runs the script: what it would show or do never happens' },
  iframe: { slug: 'html-iframe', breaks: 'removes the frame and whatever it shows' },
  embed: { slug: 'html-embed', breaks: 'removes the embedded content' },
  canvas: { slug: 'html-canvas', breaks: 'shows an empty box: a canvas is drawn by script' },
};

/** A feature of mailroom's own, with caniemail's shape: every client lacks it. */
function unsupportedEverywhere(caniemail: Caniemail, slug: string, tag: string): FeatureData {
  const stats: FeatureData['stats'] = {};
  for (const [family, platforms] of Object.entries(caniemail.features[0]?.stats ?? {})) {
    stats[family] = Object.fromEntries(Object.keys(platforms).map((platform) => [platform, { mailroom: 'n' }]));
  }
  return { slug, title: `<${tag}> element`, url: '', category: 'html', stats, notes_by_num: null };
}

let ownFeatures: Map<string, FeatureData> | undefined;

export function findContent(caniemail: Caniemail, reading: HtmlReading): Finding[] {
  ownFeatures ??= new Map(Object.entries(NEVER_SHOWN).map(([tag, { slug }]) => [tag, unsupportedEverywhere(caniemail, slug, tag)]));
  const findings: Finding[] = [];
  const svg = caniemail.bySlug.get('html-svg');
  for (const [offset, element] of reading.elements) {
    const never = NEVER_SHOWN[element.name];
    const feature = ownFeatures.get(element.name);
    // JSON in a script (schema.org markup Gmail reads for its actions) is data, not a script to run.
    if (never && feature && !(element.name === 'script' && /json/i.test(element.attributes.type ?? ''))) {
      findings.push({ feature, place: { kind: 'element', offset, element }, breaks: never.breaks });
    }
    if (element.name === 'svg' && !element.inSvg && svg) {
      findings.push({ feature: svg, place: { kind: 'element', offset, element }, breaks: 'never shows the inline SVG (a logo or icon drawn in it is lost)' });
    }
  }
  return [...findings, ...webFontsWithoutFallback(caniemail, reading)];
}

/** How a mail loads a web font: the feature a client must support for it to show. */
type Loader = 'css-at-font-face' | 'css-at-import' | 'html-link';

const GENERIC =
  /^(serif|sans-serif|monospace|cursive|fantasy|system-ui|ui-serif|ui-sans-serif|ui-monospace|ui-rounded|emoji|math|fangsong|-apple-system|blinkmacsystemfont|inherit|initial|unset)$/;

/**
 * A `font-family` that names only web fonts (from @font-face, an @import
 * or a <link> of a font service) and nothing to fall back on: where the
 * font does not load, the client's default font shows, and an icon font
 * shows the names of its icons.
 */
function webFontsWithoutFallback(caniemail: Caniemail, reading: HtmlReading): Finding[] {
  const webFonts = new Map<string, Loader>();
  for (const block of reading.styleBlocks) {
    for (const statement of topLevel(block.css)) {
      if (/^@font-face$/i.test(statement.prelude)) {
        const family = parseDeclarations(statement.body).find((d) => d.property === 'font-family');
        if (family) webFonts.set(familyName(family.value), 'css-at-font-face');
      } else if (/^@import\b/i.test(statement.prelude)) for (const name of fontServiceFamilies(statement.prelude)) webFonts.set(name, 'css-at-import');
    }
  }
  for (const element of reading.elements.values()) {
    if (element.name === 'link')
      for (const name of fontServiceFamilies(element.attributes.href ?? '')) if (!webFonts.has(name)) webFonts.set(name, 'html-link');
  }
  if (webFonts.size === 0) return [];

  const findings: Finding[] = [];
  const check = (value: string, place: Finding['place']) => {
    const families = value
      .split(',')
      .map(familyName)
      .filter((name) => name !== '');
    if (families.length === 0 || families.some((name) => GENERIC.test(name) || !webFonts.has(name))) return;
    const feature = caniemail.bySlug.get(webFonts.get(families[0]!)!);
    if (feature)
      findings.push({
        feature,
        place,
        breaks: `never loads the web font ${families.join(', ')}, and the mail names no other font: the client's own default shows (an icon font shows its icons' names)`,
      });
  };
  for (const [offset, element] of reading.elements) {
    for (const d of element.style)
      if (d.property === 'font-family' || d.property === 'font') check(fontList(d.property, d.value), { kind: 'element', offset, element });
  }
  for (const block of reading.styleBlocks) {
    for (const statement of topLevel(block.css)) {
      if (statement.prelude.startsWith('@')) continue;
      for (const d of parseDeclarations(statement.body)) {
        if (d.property !== 'font-family' && d.property !== 'font') continue;
        const at = statement.bodyStart + Math.max(0, statement.body.search(new RegExp(`${d.property}\\s*:`, 'i')));
        check(fontList(d.property, d.value), { kind: 'css', offset: block.start + at, block, text: `${d.property}: ${d.value}`, selector: statement.prelude });
      }
    }
  }
  return findings;
}

function familyName(name: string): string {
  return plainValue(name)
    .replace(/^["']|["']$/g, '')
    .trim();
}

/** The family list of a `font` shorthand is what follows its size. */
function fontList(property: string, value: string): string {
  if (property === 'font-family') return value;
  return /\d(?:px|pt|em|rem|%)(?:\s*\/\s*\S+)?\s+(.*)$/i.exec(value)?.[1] ?? '';
}

/** The families a Google Fonts (or Bunny Fonts) URL loads: `family=Open+Sans:wght@400` → 'open sans'. */
function fontServiceFamilies(url: string): string[] {
  if (!/fonts\.(googleapis|bunny)\.net|fonts\.googleapis\.com/i.test(url)) return [];
  return [...url.matchAll(/family=([^&"')]+)/gi)]
    .flatMap((m) => decodeURIComponent(m[1]!.replace(/\+/g, ' ')).split('|'))
    .map((f) => familyName(f.split(':')[0] ?? ''));
}

interface Statement {
  /** The selector or at-rule (`@font-face`, `@import url(…);`). */
  readonly prelude: string;
  readonly body: string;
  /** Where the body starts in the block's CSS. */
  readonly bodyStart: number;
}

/** A <style> block's top-level rules and at-rules, comments skipped (at-rules' own rules, e.g. inside @media, are not read). */
export function topLevel(css: string): Statement[] {
  const statements: Statement[] = [];
  let preludeStart = 0;
  for (let i = 0; i < css.length; i++) {
    if (css.startsWith('/*', i)) {
      const end = css.indexOf('*/', i + 2);
      i = end === -1 ? css.length : end + 1;
      continue;
    }
    const c = css[i];
    if (c === ';') {
      const prelude = css
        .slice(preludeStart, i)
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .trim();
      if (prelude.startsWith('@')) statements.push({ prelude, body: '', bodyStart: i });
      preludeStart = i + 1;
    } else if (c === '{') {
      let depth = 1;
      let j = i + 1;
      while (j < css.length && depth > 0) {
        if (css[j] === '{') depth++;
        else if (css[j] === '}') depth--;
        j++;
      }
      statements.push({
        prelude: css
          .slice(preludeStart, i)
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .trim(),
        body: css.slice(i + 1, j - 1),
        bodyStart: i + 1,
      });
      i = j - 1;
      preludeStart = j;
    }
  }
  return statements;
}
