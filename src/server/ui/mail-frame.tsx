// A mail's HTML, shown in a sandboxed iframe as a careful mail client shows
// it: no scripts (no allow-scripts; the page's own CSP, which a srcdoc frame
// inherits, forbids inline scripts and handlers as well), no forms, no top
// navigation, an opaque origin that can read nothing of the UI's. Links open
// in a new tab (allow-popups, escaping the sandbox so the site works there).
// Remote images are blocked until the person allows them: a policy of the
// frame's own narrows images to data: and blob: (tracking pixels stay
// unfetched), and is left out once allowed.
import { useState } from 'preact/hooks';

/** Does the HTML name an image (or background) on the network? Then the "show images" switch is offered. */
export function hasRemoteImages(html: string): boolean {
  return (
    /<img\b[^>]*\bsrc\s*=\s*["']?\s*(https?:)?\/\//i.test(html) ||
    /url\(\s*["']?\s*(https?:)?\/\//i.test(html) ||
    /\bbackground\s*=\s*["']?\s*(https?:)?\/\//i.test(html)
  );
}

const BLOCK_REMOTE_IMAGES = '<meta http-equiv="Content-Security-Policy" content="img-src data: blob:">';
const LINKS_IN_NEW_TAB = '<base target="_blank">';

export function frameDocument(html: string, allowImages: boolean): string {
  return `${allowImages ? '' : BLOCK_REMOTE_IMAGES}${LINKS_IN_NEW_TAB}${html}`;
}

export function MailFrame({ html, subject }: { html: string; subject: string }) {
  const [allowImages, setAllowImages] = useState(false);
  const remote = hasRemoteImages(html);
  return (
    <div class="mail-frame">
      {remote && !allowImages && (
        <p class="notice" role="status">
          Remote images are blocked.{' '}
          <button type="button" onClick={() => setAllowImages(true)}>
            Show remote images
          </button>
        </p>
      )}
      <iframe
        key={allowImages ? 'images' : 'blocked'}
        title={`HTML of “${subject}”`}
        sandbox="allow-popups allow-popups-to-escape-sandbox"
        referrerpolicy="no-referrer"
        srcdoc={frameDocument(html, allowImages)}
      />
    </div>
  );
}
