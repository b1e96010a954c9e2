// The document a mail frame is given (its `srcdoc`): the mail's HTML with
// every element removed that could make the browser fetch something, or
// change the frame's own rules, before anyone clicks. The frame's CSP (the
// page's, which a srcdoc frame inherits, and the `img-src` narrowing added
// here) stops images, scripts, fonts and styles from elsewhere, but Chromium
// applies no CSP to `<link rel=prefetch>`: opening a mail with one would
// send the sender a read receipt, or a GET to any host the browser reaches.
// So the mail frame never keeps a `<link>` (its stylesheets are blocked
// anyway), a `<base>`, a `<meta http-equiv>` or `<meta name=referrer>`; the
// CSP stays as the second wall.
//
// The HTML is parsed with DOMParser, which loads nothing and runs nothing
// (scripting is off, as in the sandboxed frame, so `<noscript>` is read as
// markup in both). Two places a parse does not look at are looked at too:
// a `<template>`'s content (the frame attaches `<template
// shadowrootmode>` as a live shadow root) and an `<iframe srcdoc>` (a
// document of its own, removed whole). A document from which something was
// removed is serialised again, and serialising can change what the next
// parse builds (nested forms in MathML re-parse into new elements), so the
// document given to the frame is one whose own parse was checked, with our
// elements in front: a document that still grows strays after a few rounds
// is not shown.

/** What a mail frame never keeps. */
const STRAYS = 'link, base, meta[http-equiv], meta[name="referrer" i], iframe[srcdoc]';

/** Ours, first in the document: the page's policy narrowed to data: and blob: images until the person allows remote ones. */
const BLOCK_REMOTE_IMAGES = '<meta http-equiv="Content-Security-Policy" content="img-src data: blob:">';
/** Ours: a mail's links open in a new tab (the sandbox lets that tab escape it, so the site works there). */
const LINKS_IN_NEW_TAB = '<base target="_blank">';

/** How often a document is cleaned and parsed again before it is given up (one round cleans any mail seen so far, two the re-parse tricks). */
const MAX_ROUNDS = 4;

/** Shown instead of a mail that could not be cleaned: its text and raw source are still a tab away. */
export const UNSAFE_MAIL_NOTICE =
  '<p>This mail’s HTML keeps producing elements that could load from the network, so it is not shown. Read it in the Text or Raw tab.</p>';

function parse(html: string): Document {
  return new DOMParser().parseFromString(html, 'text/html');
}

/** The strays in a document or fragment, shadow-root templates' contents included (ours, matched by their markup, are not strays). */
function straysIn(root: ParentNode, ours: readonly string[]): Element[] {
  const found = [...root.querySelectorAll(STRAYS)].filter((element) => !ours.includes(element.outerHTML));
  for (const template of root.querySelectorAll('template')) found.push(...straysIn(template.content, ours));
  return found;
}

/** The mail's HTML as a frame's srcdoc: nothing that fetches without a click, ours in front. */
export function frameDocument(html: string, allowImages: boolean): string {
  const ours = allowImages ? [LINKS_IN_NEW_TAB] : [BLOCK_REMOTE_IMAGES, LINKS_IN_NEW_TAB];
  const front = ours.join('');
  let body = html;
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const document = `${front}${body}`;
    // The frame's own parse of exactly this document, checked.
    if (straysIn(parse(document), ours).length === 0) return document;
    const mail = parse(body);
    for (const stray of straysIn(mail, [])) stray.remove();
    body = mail.documentElement.outerHTML;
  }
  return `${front}${UNSAFE_MAIL_NOTICE}`;
}
