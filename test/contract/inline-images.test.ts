// The cid: rule the web UI and openMail share: which URLs are inline
// references, how a Content-ID is matched, and what is left alone.
import { describe, expect, it } from 'vitest';
import { contentIdKey, hasInlineReferences, replaceInlineReferences } from '../../src/contract/inline-images.js';

const known = new Map([
  ['logo@acme', 'L'],
  ['a b@acme', 'S'],
]);
const urlFor = (contentId: string) => known.get(contentId);

describe('inline references (cid:)', () => {
  it('finds them in attributes and CSS, in any case', () => {
    expect(hasInlineReferences('<img src="cid:logo@acme">')).toBe(true);
    expect(hasInlineReferences('<div style="background:url(\'CID:logo@acme\')">')).toBe(true);
    expect(hasInlineReferences('<p>no images</p>')).toBe(false);
    // Called twice in a row, the same answer (no regex state left behind).
    expect(hasInlineReferences('<img src=cid:x>')).toBe(true);
    expect(hasInlineReferences('<img src=cid:x>')).toBe(true);
  });

  it('replaces the known ones wherever they are, and leaves unknown ones as they were', () => {
    const html = `<img src="cid:logo@acme"><img src='cid:missing@acme'><td background=cid:logo@acme><i style="background:url(cid:logo@acme)">`;
    expect(replaceInlineReferences(html, urlFor)).toBe(`<img src="L"><img src='cid:missing@acme'><td background=L><i style="background:url(L)">`);
  });

  it('matches a %-encoded Content-ID (RFC 2392), and one that is not valid %-encoding as written', () => {
    expect(replaceInlineReferences('<img src="cid:a%20b@acme">', urlFor)).toBe('<img src="S">');
    expect(replaceInlineReferences('<img src="cid:100%@acme">', (id) => (id === '100%@acme' ? 'P' : undefined))).toBe('<img src="P">');
  });

  it('takes a Content-ID header value without its angle brackets', () => {
    expect(contentIdKey('<logo@acme>')).toBe('logo@acme');
    expect(contentIdKey(' <logo@acme> ')).toBe('logo@acme');
    expect(contentIdKey('logo@acme')).toBe('logo@acme');
  });
});
