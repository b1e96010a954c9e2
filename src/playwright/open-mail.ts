// `openMail(page, mail)`: the mail in the test's own browser, as a mail
// client shows it, so a test clicks the button a person would click
// (`page.getByRole('link', { name: 'Confirm' })`) instead of reading
// `mail.links[0]`. A link that is hidden, mislabelled or broken in the HTML
// is then the failure it should be.
//
// The document is answered by a Playwright route on the page, at an origin
// of its own (`http://mail.mailroom.localhost`, a loopback name no real site
// can have): no server to start, and it works the same with a browser that
// runs elsewhere (connectOptions). The answer carries a Content-Security-
// Policy that forbids every script (inline, event handlers, `javascript:`
// URLs), plugins, forms and a `<base>` of the mail's own, the way a mail
// client never runs a sender's code. Links are real links: following one is
// an ordinary navigation in the same page and context, so cookies the app set
// earlier in the test are sent. Inline images (`cid:`) are read out of the
// mail's raw source and answered by the same route, as a mail client shows
// the images a mail carries itself.
//
// Dark mode and a phone's width are the page's own emulation
// (`page.emulateMedia`, `page.setViewportSize`), set before the mail loads,
// so its `@media (prefers-color-scheme: dark)` and `(max-width: …)` rules
// apply as in Apple Mail, iOS Mail and Outlook for Mac, which honour them.
// A mail that declares no color scheme gets those clients' default too:
// light text on a dark canvas wherever it sets no colours of its own.
import type { Page, Route } from '@playwright/test';
import { LinkifyIt } from 'linkify-it';
import PostalMime from 'postal-mime';
import { contentIdKey, hasInlineReferences, replaceInlineReferences } from '../contract/inline-images.js';
import { describeValue } from '../contract/validation.js';
import type { Mail } from '../inbox/mail.js';

/** The origin mail is shown at: `.localhost` names resolve to loopback only, and the route answers before any request leaves. */
export const MAIL_ORIGIN = 'http://mail.mailroom.localhost';

/**
 * What a shown mail may do: images, styles and fonts from anywhere (as a
 * mail client that shows images), nothing that runs or submits.
 */
export const MAIL_CSP = [
  "default-src 'none'",
  "script-src 'none'",
  "object-src 'none'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  'img-src * data: blob:',
  "style-src * 'unsafe-inline'",
  'font-src * data:',
].join('; ');

/**
 * The mail a test has: a `Mail` from `inbox.expectMail`, or anything with its
 * HTML, text and subject (and its `raw()` source, for inline images).
 */
export type OpenableMail = Pick<Mail, 'html' | 'text' | 'subject'> & Partial<Pick<Mail, 'id' | 'address' | 'raw'>>;

/** Options of `openMail()`. */
export interface OpenMailOptions {
  /** Show the text part even when the mail has HTML (default: HTML when there is some). */
  readonly part?: 'html' | 'text';
  /**
   * Show it as a mail client in dark (or light) mode: the page's
   * `prefers-color-scheme`, which it keeps afterwards. Default: the page's as it is.
   */
  readonly colorScheme?: 'light' | 'dark';
  /**
   * Show it at a phone's width (`'phone'`: 375 x 667 CSS pixels) or at this
   * many pixels wide (the height kept): the page's viewport, which it keeps
   * afterwards. Default: the page's as it is.
   */
  readonly width?: 'phone' | number;
}

/** The viewport of `width: 'phone'`: an iPhone SE's, the narrowest phone most mail is read on. */
export const PHONE_VIEWPORT = Object.freeze({ width: 375, height: 667 });

/** What the route answers at one path: a mail's document, or one of its inline images. */
interface Shown {
  readonly body: string | Buffer;
  readonly contentType: string;
}

// One route per page answers every mail that page has been shown; the
// documents are kept per page, so a `page.goBack()` to a mail still works.
const shown = new WeakMap<Page, Map<string, Shown>>();
let counter = 0;

/**
 * Shows a mail in `page`, as a mail client would, and resolves once it has
 * loaded: its HTML (scripts never run) with its inline images, or its text
 * with the URLs as links when it has no HTML; in dark mode or at a phone's
 * width when asked (`{ colorScheme: 'dark', width: 'phone' }`). Returns the
 * page, for chaining.
 *
 * @example
 * const mail = await inbox.expectMail({ subject: 'Confirm' });
 * await openMail(page, mail);
 * await page.getByRole('link', { name: 'Confirm my email' }).click();
 *
 * @example
 * await openMail(page, mail, { colorScheme: 'dark', width: 'phone' });
 * await expect(page).toHaveScreenshot('confirm-dark-phone.png', { fullPage: true });
 */
export async function openMail(page: Page, mail: OpenableMail, options: OpenMailOptions = {}): Promise<Page> {
  validateOptions(options);
  if (options.colorScheme !== undefined) await page.emulateMedia({ colorScheme: options.colorScheme });
  if (options.width === 'phone') await page.setViewportSize(PHONE_VIEWPORT);
  else if (options.width !== undefined) await page.setViewportSize({ width: options.width, height: page.viewportSize()?.height ?? PHONE_VIEWPORT.height });
  let documents = shown.get(page);
  if (!documents) {
    const routed = new Map<string, Shown>();
    documents = routed;
    shown.set(page, routed);
    await page.route(`${MAIL_ORIGIN}/**`, (route) => answer(route, routed));
  }
  const path = `/mail/${++counter}/${encodeURIComponent(mail.id ?? 'message')}`;
  let document = mailDocument(mail, options.part);
  if (document === mail.html && mail.raw && hasInlineReferences(document)) {
    const images = await inlineImages(await mail.raw());
    const routed = documents;
    document = replaceInlineReferences(document, (contentId) => {
      const image = images.get(contentId);
      if (!image) return undefined;
      const url = `${path}/cid/${encodeURIComponent(contentId)}`;
      routed.set(url, image);
      return url;
    });
  }
  documents.set(path, { body: withClientColorScheme(document), contentType: 'text/html; charset=utf-8' });
  await page.goto(`${MAIL_ORIGIN}${path}`, { waitUntil: 'load' });
  return page;
}

/** The images a mail carries for its HTML, by Content-ID. */
async function inlineImages(source: string): Promise<Map<string, Shown>> {
  const email = await PostalMime.parse(source, { attachmentEncoding: 'arraybuffer' });
  const images = new Map<string, Shown>();
  for (const attachment of email.attachments) {
    if (!attachment.contentId || !/^image\//i.test(attachment.mimeType) || typeof attachment.content === 'string') continue;
    const bytes =
      attachment.content instanceof ArrayBuffer
        ? Buffer.from(attachment.content)
        : Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.byteLength);
    images.set(contentIdKey(attachment.contentId), { body: bytes, contentType: attachment.mimeType });
  }
  return images;
}

function validateOptions(options: OpenMailOptions): void {
  const { part, colorScheme, width } = options;
  if (part !== undefined && part !== 'html' && part !== 'text') {
    throw new TypeError(`Expected \`openMail\` option \`part\` to be "html" or "text", got ${describeValue(part)}`);
  }
  if (colorScheme !== undefined && colorScheme !== 'light' && colorScheme !== 'dark') {
    throw new TypeError(`Expected \`openMail\` option \`colorScheme\` to be "light" or "dark", got ${describeValue(colorScheme)}`);
  }
  if (width !== undefined && width !== 'phone' && !(typeof width === 'number' && Number.isInteger(width) && width > 0)) {
    throw new TypeError(`Expected \`openMail\` option \`width\` to be "phone" or a whole number of CSS pixels, got ${describeValue(width)}`);
  }
}

/**
 * The document with the color schemes a dark-mode client assumes when a
 * mail declares none (`<meta name="color-scheme" content="light dark">`),
 * so dark mode darkens its canvas and default text as Apple Mail does; a
 * mail that names a color scheme anywhere (a meta, a CSS `color-scheme`) is
 * shown as it asks. Placed in the head, or where one would start.
 */
export function withClientColorScheme(document: string): string {
  if (/color-scheme/i.test(document)) return document;
  const meta = '<meta name="color-scheme" content="light dark">';
  const after = /<head(?:\s[^>]*)?>/i.exec(document) ?? /<html(?:\s[^>]*)?>/i.exec(document) ?? /^\s*<!doctype[^>]*>/i.exec(document);
  if (!after) return meta + document;
  const at = after.index + after[0].length;
  return document.slice(0, at) + meta + document.slice(at);
}

function answer(route: Route, documents: ReadonlyMap<string, Shown>): Promise<void> {
  const { pathname } = new URL(route.request().url());
  const found = documents.get(pathname);
  const headers = { 'content-security-policy': MAIL_CSP, 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };
  if (found === undefined) {
    // The favicon, or an image the mail names relative to its own (nonexistent) base.
    return route.fulfill({ status: 404, headers, contentType: 'text/plain', body: 'Not a mail shown by openMail' });
  }
  return route.fulfill({ status: 200, headers, contentType: found.contentType, body: found.body });
}

/** The document a mail is shown as: its HTML as sent, or its text as text. */
export function mailDocument(mail: OpenableMail, part?: 'html' | 'text'): string {
  if (mail.html && part !== 'text') return mail.html;
  const title = escapeHtml(mail.subject);
  return [
    '<!doctype html><html><head><meta charset="utf-8">',
    `<title>${title}</title>`,
    '<style>body{margin:16px;font:15px/1.5 system-ui,sans-serif}pre{white-space:pre-wrap;word-break:break-word;font:inherit}</style>',
    `</head><body><pre>${linkifiedText(mail.text)}</pre></body></html>`,
  ].join('');
}

const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

/** Escapes the text and makes its http(s) URLs links, as mail clients do with a text mail. */
export function linkifiedText(text: string): string {
  const matches = (linkify.match(text) ?? []).filter((m) => /^https?:/i.test(m.url));
  let out = '';
  let at = 0;
  for (const m of matches) {
    out += escapeHtml(text.slice(at, m.index));
    out += `<a href="${escapeHtml(m.url)}">${escapeHtml(m.raw)}</a>`;
    at = m.lastIndex;
  }
  return out + escapeHtml(text.slice(at));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
