// The mail frame's document (src/server/ui/mail-document.ts) as a function,
// run where it runs: in Chromium, whose parser and serialiser decide what a
// cleaned mail turns into. The module is compiled on the spot and loaded into
// one blank page per worker (a page per case would cost a browser context
// each); each case parses the result again, as the frame will, and counts
// what could fetch. That opening a mail fetches nothing is proven through
// the web UI in web-ui.spec.ts.
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';
import { test as base, expect } from '@playwright/test';

const SOURCE = new URL('../src/server/ui/mail-document.ts', import.meta.url);
const CSP = '<meta http-equiv="Content-Security-Policy" content="img-src data: blob:">';
const BASE = '<base target="_blank">';

/** `k` layers of the nested-forms-in-MathML re-parse: each serialisation brings the next layer's content out of a <style>. */
function reparseLayers(k: number, inner: (layer: number) => string): string {
  let html = inner(k);
  for (let layer = k - 1; layer >= 0; layer -= 1) html = `${inner(layer)}<form><math><mtext></form><form><mglyph><style></math>${html}`;
  return html;
}

interface Probed {
  readonly document: string;
  /** The frame's parse of `document`: every element that could fetch or set a rule, shadow-root templates included. */
  readonly strays: string[];
}

/** In the page, beside the module: frameDocument and the frame's parse of what it gives; one clean-and-serialise with no check after it. */
const PROBE = `
const straysIn = (root) => [
  ...[...root.querySelectorAll('link, base, meta, iframe')].map((element) => element.outerHTML),
  ...[...root.querySelectorAll('template')].flatMap((template) => straysIn(template.content)),
];
const parse = (html) => new DOMParser().parseFromString(html, 'text/html');
window.probe = (html, allowImages) => {
  const document = mailDocument.frameDocument(html, allowImages);
  return { document, strays: straysIn(parse(document)) };
};
window.linksAfterOneCleaning = (html) => {
  const parsed = parse(html);
  for (const link of parsed.querySelectorAll('link')) link.remove();
  return parse(parsed.documentElement.outerHTML).querySelectorAll('link').length;
};`;

interface InPage {
  probe(html: string, allowImages: boolean): Probed;
  linksAfterOneCleaning(html: string): number;
}

interface MailDocument {
  /** frameDocument(html, allowImages) and the frame's parse of what it gives. */
  readonly run: (html: string, allowImages?: boolean) => Promise<Probed>;
  /** How many <link>s a single clean-and-serialise leaves for the next parse. */
  readonly linksAfterOneCleaning: (html: string) => Promise<number>;
}

const test = base.extend<object, { mailDocument: MailDocument }>({
  mailDocument: [
    async ({ browser }, use) => {
      const compiled = transformSync(readFileSync(SOURCE, 'utf8'), { loader: 'ts', format: 'iife', globalName: 'mailDocument' }).code;
      const page = await browser.newPage();
      await page.setContent('<!doctype html><title>mail document</title>');
      await page.addScriptTag({ content: `${compiled}\n${PROBE}` });
      await use({
        run: (html, allowImages = false) =>
          page.evaluate(([html, allowImages]) => (globalThis as unknown as InPage).probe(html, allowImages), [html, allowImages] as const),
        linksAfterOneCleaning: (html) => page.evaluate((html) => (globalThis as unknown as InPage).linksAfterOneCleaning(html), html),
      });
      await page.close();
    },
    { scope: 'worker' },
  ],
});

test('a mail with nothing to remove is given as it is, behind the image policy and the new-tab base', async ({ mailDocument: { run } }) => {
  const html = '<table><tr><td style="color:red">Hi <a href="https://acme.example/x">there</a></td></tr></table><img src="https://acme.example/p.gif">';
  expect((await run(html)).document).toBe(`${CSP}${BASE}${html}`);
  expect((await run(html, true)).document).toBe(`${BASE}${html}`);
});

test('every <link>, <base>, <meta http-equiv>, <meta name=referrer> and <iframe srcdoc> goes; the rest of the mail stays', async ({
  mailDocument: { run },
}) => {
  const { document, strays } = await run(
    [
      '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
      '<base href="https://tracker.example/"><meta http-equiv="refresh" content="0; url=https://tracker.example/r">',
      '<meta http-equiv="Content-Security-Policy" content="img-src *"><meta name="referrer" content="unsafe-url">',
      '<link rel="stylesheet" href="https://tracker.example/s.css"><LINK REL="prefetch" HREF="https://tracker.example/p"></head>',
      '<body><p>Your order has shipped.</p><link rel="preload" as="image" href="https://tracker.example/i">',
      '<svg><foreignObject><link rel="prefetch" href="https://tracker.example/f"></foreignObject></svg>',
      '<noscript><link rel="prefetch" href="https://tracker.example/n"></noscript>',
      '<iframe srcdoc="&lt;link rel=prefetch href=https://tracker.example/d&gt;"></iframe></body>',
    ].join(''),
  );
  expect(strays).toEqual([CSP, BASE, '<meta charset="utf-8">', '<meta name="viewport" content="width=device-width">']);
  expect(document).toContain('<p>Your order has shipped.</p>');
  expect(document).not.toContain('tracker.example');
});

test('a declarative shadow root’s <link> goes, and its template stays', async ({ mailDocument: { run } }) => {
  const { document, strays } = await run(
    '<div><template shadowrootmode="open"><link rel="prefetch" href="https://tracker.example/s"><slot></slot></template>x</div>',
  );
  expect(strays).toEqual([CSP, BASE]);
  expect(document).toContain('<template shadowrootmode="open"><slot></slot></template>');
});

test('with remote images allowed, a copy of the image policy in the mail goes too, and nothing of ours but the base is in front', async ({
  mailDocument: { run },
}) => {
  const { document, strays } = await run(`${CSP}<p>x</p>`, true);
  expect(strays).toEqual([BASE]);
  expect(document.startsWith(BASE)).toBe(true);
});

test('a <link> that a re-parse brings out of a <style> is caught by checking the cleaned document’s own parse', async ({
  mailDocument: { run, linksAfterOneCleaning },
}) => {
  // One removal, one serialisation: the next parse has a link that was not there before.
  const html = `<link rel="prefetch" href="https://tracker.example/a">${reparseLayers(1, (layer) => (layer === 1 ? '<link rel="prefetch" href="https://tracker.example/b">' : ''))}`;
  const once = await linksAfterOneCleaning(html);
  expect(once, 'a single clean-and-serialise would leave a link').toBe(1);
  const { document, strays } = await run(html);
  expect(strays).toEqual([CSP, BASE]);
  expect(document).not.toContain('tracker.example/b');
});

test('a mail that grows a new <link> every time it is cleaned is not shown: a notice says where to read it', async ({ mailDocument: { run } }) => {
  const html = reparseLayers(6, (layer) => `<link rel="prefetch" href="https://tracker.example/${layer}">`);
  const { document, strays } = await run(html);
  expect(strays).toEqual([CSP, BASE]);
  expect(document).not.toContain('tracker.example');
  expect(document).toContain('Read it in the Text or Raw tab');
});
