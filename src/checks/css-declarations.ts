// The declarations of a style attribute or a CSS rule, as the html check
// reads them to judge a feature by what the mail does with it (the value of
// a `position`, whether a `background` is only a colour, a `font-family`'s
// fallbacks). Mail CSS is simple; a `;` inside quotes or parentheses
// (`url(a;b)`, `"Font;Name"`) is kept in its value.

export interface Declaration {
  /** Lower case, as CSS compares it. */
  readonly property: string;
  /** Trimmed, `!important` kept. */
  readonly value: string;
}

export function parseDeclarations(css: string): Declaration[] {
  const declarations: Declaration[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  const take = (end: number) => {
    const text = css.slice(start, end);
    const colon = text.indexOf(':');
    if (colon > 0) {
      const property = text.slice(0, colon).trim().toLowerCase();
      const value = text.slice(colon + 1).trim();
      if (property !== '' && value !== '') declarations.push({ property, value });
    }
    start = end + 1;
  };
  for (let i = 0; i < css.length; i++) {
    const c = css[i];
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ';' && depth === 0) take(i);
  }
  take(css.length);
  return declarations;
}

/** The value without `!important`, lower case, whitespace folded. */
export function plainValue(value: string): string {
  return value
    .replace(/!\s*important\s*$/i, '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();
}

/** Whether a value only resets (`0`, `none`, `normal`, `auto`, …): a client that ignores it leaves the element as it is by default. */
export function isReset(value: string): boolean {
  return /^(0(px|em|rem|%|pt)?( 0(px|em|rem|%|pt)?)*|none|normal|auto|inherit|initial|unset|transparent)$/.test(plainValue(value));
}
