// A mail's HTML, shown in a sandboxed iframe as a careful mail client shows
// it: no scripts (no allow-scripts; the page's own CSP, which a srcdoc frame
// inherits, forbids inline scripts and handlers as well), no forms, no top
// navigation, an opaque origin that can read nothing of the UI's. Links open
// in a new tab (allow-popups, escaping the sandbox so the site works there).
// The document the frame gets is cleaned first (mail-document.ts): nothing in
// it loads from the network without a click. Remote images are blocked until
// the person allows them: a policy of the frame's own narrows images to
// data: and blob: (tracking pixels stay unfetched), and is left out once
// allowed. Inline images (`cid:`) are the mail's own attachments: read out of
// the raw source and shown as data: URLs.
import PostalMime from 'postal-mime';
import { useEffect, useState } from 'preact/hooks';
import { contentIdKey, hasInlineReferences, replaceInlineReferences } from '../../contract/inline-images.js';
import { api, ApiError } from './api.js';
import { frameDocument } from './mail-document.js';

/** Does the HTML name an image (or background) on the network? Then the "show images" switch is offered. */
export function hasRemoteImages(html: string): boolean {
  return (
    /<img\b[^>]*\bsrc\s*=\s*["']?\s*(https?:)?\/\//i.test(html) ||
    /url\(\s*["']?\s*(https?:)?\/\//i.test(html) ||
    /\bbackground\s*=\s*["']?\s*(https?:)?\/\//i.test(html)
  );
}

/**
 * The HTML with each `cid:` image replaced by a data: URL of that attachment
 * (data:, not blob:, since the frame's opaque origin may not read the
 * page's blob: URLs).
 */
async function withInlineImages(html: string, raw: ArrayBuffer): Promise<string> {
  const parsed = await PostalMime.parse(raw, { attachmentEncoding: 'base64' });
  const images = new Map<string, string>();
  for (const attachment of parsed.attachments) {
    if (attachment.contentId && /^image\//i.test(attachment.mimeType)) {
      images.set(contentIdKey(attachment.contentId), `data:${attachment.mimeType};base64,${attachment.content as string}`);
    }
  }
  return replaceInlineReferences(html, (contentId) => images.get(contentId));
}

export function MailFrame({ html, subject, address, id }: { html: string; subject: string; address: string; id: string }) {
  const [allowImages, setAllowImages] = useState(false);
  // undefined while the inline images are on their way. The frame is drawn
  // once, with its final document: changing a sandboxed frame's srcdoc
  // while it loads left it empty to Playwright in about 1 of 5 runs under
  // load (the cid: spec in e2e/web-ui.spec.ts), and a first draw with
  // broken images would flash anyway.
  const [shown, setShown] = useState<string | undefined>(hasInlineReferences(html) ? undefined : html);
  useEffect(() => {
    if (!hasInlineReferences(html)) return setShown(html);
    setShown(undefined);
    let live = true;
    let retry: ReturnType<typeof setTimeout> | undefined;
    // The raw source comes right after the message itself, so the address's
    // message budget may answer 429: wait as told and ask again, or the
    // inline images never show (seen once in CI).
    const load = (): void => {
      api
        .raw(address, id)
        .then((raw) => withInlineImages(html, raw))
        .then(
          (inlined) => live && setShown(inlined),
          (error: unknown) => {
            if (!live) return;
            if (error instanceof ApiError && error.status === 429) retry = setTimeout(load, error.retryAfterMs ?? 1_000);
            // Anything else: the mail shows without its inline images.
            else setShown(html);
          },
        );
    };
    load();
    return () => {
      live = false;
      clearTimeout(retry);
    };
  }, [html, address, id]);
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
      {shown === undefined ? (
        <p class="loading">Loading the inline images…</p>
      ) : (
        <iframe
          // A new frame for each document, never a new srcdoc in the same one (see `shown`).
          key={`${id}:${allowImages ? 'images' : 'blocked'}`}
          title={`HTML of “${subject}”`}
          sandbox="allow-popups allow-popups-to-escape-sandbox"
          referrerpolicy="no-referrer"
          srcdoc={frameDocument(shown, allowImages)}
        />
      )}
    </div>
  );
}
