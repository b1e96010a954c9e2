// A `cid:` URL (RFC 2392) names a part of the same message by its Content-ID:
// how a mail shows an image it carries itself. Whoever shows a mail's HTML
// (the web UI, openMail) swaps each such URL for one its page can load; the
// rule for finding and matching them is written once, here.

const CID_URL = /\bcid:([^\s"'()<>]+)/gi;

/** A part's Content-ID header value as a `cid:` URL names it: without its angle brackets. */
export function contentIdKey(contentId: string): string {
  return contentId.trim().replace(/^<|>$/g, '');
}

/** Does the HTML refer to a part of its own message (`cid:`)? */
export function hasInlineReferences(html: string): boolean {
  CID_URL.lastIndex = 0;
  return CID_URL.test(html);
}

/**
 * The HTML with each `cid:` URL replaced by `urlFor(contentId)`; a URL whose
 * part is unknown (`urlFor` answers undefined) is left as it was. The
 * Content-ID may be %-encoded in the URL, as RFC 2392 asks.
 */
export function replaceInlineReferences(html: string, urlFor: (contentId: string) => string | undefined): string {
  return html.replace(CID_URL, (whole, encoded: string) => {
    let contentId = encoded;
    try {
      contentId = decodeURIComponent(encoded);
    } catch {
      // Not %-encoded after all: matched as written.
    }
    return urlFor(contentId) ?? whole;
  });
}
