// The web UI's static files (built from src/server/ui by `npm run build`):
// `/` is its page, `/ui/app.js` and `/ui/app.css` its script and styles.
// They hold no mail, so they are served without the token; everything the
// page then shows comes through the API, which asks for it.
//
// Their Content-Security-Policy is the UI's own, not the API's sandbox: the
// page runs its one script from this origin and nothing else. A mail's HTML
// is shown in a sandboxed `srcdoc` iframe (no allow-scripts), which inherits
// this policy too, so even there no inline script or handler can run and
// nothing but images can load (the UI narrows images further until the
// person allows remote ones).
import { readFile } from 'node:fs/promises';
import { Refusal } from '../../../contract/refusal.js';
import type { Reply } from '../edge/reply.js';

export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  'img-src * data: blob:',
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const FILES: Readonly<Record<string, { readonly file: string; readonly type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/ui/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/ui/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** Where the built files are: beside this module's folder, in `ui/` (dist/server/ui once built). */
const UI_DIR = new URL('../../ui/', import.meta.url);

export function isUiPath(path: string): boolean {
  return Object.hasOwn(FILES, path);
}

export interface UiAsset {
  readonly type: string;
  readonly body: Buffer;
}

const cache = new Map<string, Promise<UiAsset>>();

/** The file for `path` (read once, then kept), or `404 not_found` saying how to build it. */
export function uiAsset(path: string): Promise<UiAsset> {
  const entry = FILES[path];
  if (!entry) return Promise.reject(new Refusal(404, 'not_found', `No such UI file: ${path}`));
  let found = cache.get(path);
  if (!found) {
    found = readFile(new URL(entry.file, UI_DIR)).then(
      (body) => ({ type: entry.type, body }),
      () => {
        cache.delete(path);
        throw new Refusal(404, 'not_found', `The web UI is not built (${entry.file} is missing); run \`npm run build\``);
      },
    );
    cache.set(path, found);
  }
  return found;
}

/** The file as the API's reply: the page's own policy replaces the API's sandbox (the top of this file says why that is safe). */
export async function uiAssetReply(path: string): Promise<Reply> {
  const { type, body } = await uiAsset(path);
  // COOP: a page the UI opens (a mail's link in a new tab) gets no handle on the UI's window.
  return {
    status: 200,
    headers: { 'content-type': type, 'cache-control': 'no-cache', 'content-security-policy': UI_CSP, 'cross-origin-opener-policy': 'same-origin' },
    body,
  };
}
