// Builds fixtures/mail-corpus/mails/ from fixtures/mail-corpus/sources/
// with the tools people build mail with, so the html check is proven on the
// markup those tools really write (test/checks/corpus.test.ts), not on what
// we think they write. The generated mails are committed; this script is
// run again only to change or add one.
//
// The tools are not mailroom's dependencies (node_modules is shared by the
// worktrees): install them in a scratch folder outside the repo and run the
// script from there. The versions the committed mails were built with:
//
//   mkdir /tmp/corpus-gen && cd /tmp/corpus-gen && npm init -y
//   npm i mjml@5.4.1 react-email@6.11.13 react@19.3.1 react-dom@19.3.1 \
//         inky@1.5.0 juice@12.2.0 foundation-emails@2.5.1 marked@15.0.12 tsx@4.23.15
//   echo '{"compilerOptions":{"jsx":"react-jsx"}}' > tsconfig.json
//   mkdir maizzle5 && (cd maizzle5 && npm init -y && npm pkg set type=module && npm i @maizzle/framework@5.5.0 tailwindcss-preset-email@1.4.2)
//   npx tsx /path/to/mailroom/scripts/build-mail-corpus.ts
//
// Packages resolve from the current folder; the React Email components and
// the Maizzle starter are copied into it (`mail-corpus-work/`) so that their own
// imports resolve there too. Each mail's source, and where it came from, is
// in fixtures/mail-corpus/README.md.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const repo = resolve(import.meta.dirname, '..');
const sources = join(repo, 'fixtures/mail-corpus/sources');
const out = join(repo, 'fixtures/mail-corpus/mails');
const scratch = process.cwd();
if (scratch.startsWith(repo)) throw new Error(`Run this from a scratch folder outside the repo (see its header), not from ${scratch}`);
const work = join(scratch, 'mail-corpus-work');
const requireHere = createRequire(join(scratch, 'package.json'));

/** A package as installed in the scratch folder (its default export when it has one). */
async function tool<T>(name: string, from = requireHere): Promise<T> {
  const module = (await import(pathToFileURL(from.resolve(name)).href)) as { default?: T } & T;
  return module.default ?? module;
}

function write(name: string, html: string, text?: string): void {
  writeFileSync(join(out, `${name}.html`), html.endsWith('\n') ? html : `${html}\n`);
  if (text !== undefined) writeFileSync(join(out, `${name}.txt`), text.endsWith('\n') ? text : `${text}\n`);
  console.log(`${name}.html${text === undefined ? '' : ' + .txt'}`);
}

const filesIn = (folder: string, extension: string) =>
  readdirSync(join(sources, folder))
    .filter((file) => file.endsWith(extension))
    .sort();

/** MJML: the official templates, compiled with the defaults (`mjml file.mjml`). */
async function buildMjml(): Promise<void> {
  const mjml = await tool<(source: string, options: object) => Promise<{ html: string; errors: unknown[] }>>('mjml');
  for (const file of filesIn('mjml', '.mjml')) {
    const { html, errors } = await mjml(readFileSync(join(sources, 'mjml', file), 'utf8'), { validationLevel: 'soft' });
    if (errors.length > 0) console.warn(`${file}: ${errors.length} MJML validation warnings`);
    write(`mjml-${basename(file, '.mjml')}`, html);
  }
}

/** React Email: the demo templates with their preview props, rendered as HTML and as plain text. */
async function buildReactEmail(): Promise<void> {
  const copy = join(work, 'react-email');
  rmSync(copy, { recursive: true, force: true });
  cpSync(join(sources, 'react-email'), copy, { recursive: true });
  // The demo's images live on its own site; without this their src is a relative /static/… path.
  process.env.VERCEL_URL = 'demo.react.email';
  const { render } = await tool<{ render: (element: unknown, options?: object) => Promise<string> }>('react-email');
  const { createElement } = await tool<{ createElement: (type: unknown, props: object) => unknown }>('react');
  const components = [
    'apple-receipt',
    'linear-login-code',
    'notion-magic-link',
    'order-confirmation',
    'password-reset',
    'stripe-welcome',
    'vercel-invite-user',
  ];
  for (const name of components) {
    const component = (await import(pathToFileURL(join(copy, `${name}.tsx`)).href)) as {
      default: ((props: object) => unknown) & { PreviewProps?: object };
    };
    const element = createElement(component.default, component.default.PreviewProps ?? {});
    write(`react-email-${name}`, await render(element, { pretty: true }), await render(element, { plainText: true }));
  }
}

/**
 * Foundation for Emails: the ZURB template's pages in its default layout,
 * Inky turned into tables, then Foundation's CSS inlined with its media
 * queries kept in a <style> (the template's gulp `inline` step, with
 * foundation-emails' compiled CSS for the template's Sass build and no
 * minifying).
 */
async function buildFoundation(): Promise<void> {
  // The package's main export is a gulp stream; its Inky class does the conversion.
  const { Inky } = await tool<{ Inky: new () => { releaseTheKraken(html: string): string } }>('inky');
  const juice = await tool<(html: string, options: object) => string>('juice');
  const css = readFileSync(requireHere.resolve('foundation-emails/dist/foundation-emails.css'), 'utf8');
  const layout = readFileSync(join(sources, 'foundation', 'layout.html'), 'utf8').replace(/\{\{!--[\s\S]*?--\}\}\n*/g, '');
  for (const file of filesIn('foundation', '.html').filter((f) => f !== 'layout.html')) {
    const page = readFileSync(join(sources, 'foundation', file), 'utf8');
    const [, matter = '', body = page] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(page) ?? [];
    const subject = /^subject:\s*(.*)$/m.exec(matter)?.[1] ?? '';
    const html = layout
      .replace('<link rel="stylesheet" type="text/css" href="{{root}}css/app.css">', '')
      .replace('{{subject}}', subject)
      .replace('{{description}}', '')
      .replace('{{> body}}', body);
    const tables = new Inky().releaseTheKraken(html);
    write(`foundation-${basename(file, '.html')}`, juice(tables, { extraCss: css, preserveMediaQueries: true, removeStyleTags: true, applyStyleTags: true }));
  }
}

/** Cerberus: hand-coded templates, taken as they are. */
function buildCerberus(): void {
  for (const file of filesIn('cerberus', '.html')) write(basename(file, '.html'), readFileSync(join(sources, 'cerberus', file), 'utf8'));
}

/** Maizzle 5: its starter project, built as its README says (`maizzle build production`), in the scratch folder's maizzle5/. */
function buildMaizzle(): void {
  const project = join(scratch, 'maizzle5');
  cpSync(join(sources, 'maizzle'), project, { recursive: true });
  // The starter copies images/ to the build; its logo is left out of the corpus (the mail links it as images/logo.png).
  mkdirSync(join(project, 'images'), { recursive: true });
  execFileSync('npx', ['maizzle', 'build', 'production'], { cwd: project, stdio: 'inherit' });
  for (const file of readdirSync(join(project, 'build_production')).filter((f) => f.endsWith('.html'))) {
    write(`maizzle-${basename(file, '.html')}`, readFileSync(join(project, 'build_production', file), 'utf8'));
  }
}

/** Text first: the Markdown is the text part, and marked makes the HTML part from it, as many apps' notifications do. */
async function buildTextFirst(): Promise<void> {
  const { marked } = await tool<{ marked: { parse(markdown: string): string } }>('marked');
  for (const file of filesIn('text-first', '.md')) {
    const markdown = readFileSync(join(sources, 'text-first', file), 'utf8');
    const body = marked.parse(markdown);
    const html = `<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"></head>\n<body>\n${body}</body>\n</html>\n`;
    write(`text-first-${basename(file, '.md')}`, html, markdown);
  }
}

/** Hand-written: the newcomer review's textbook transactional mail (shared/reviews/newcomer-first-hour.md, task 7). */
function buildHandWritten(): void {
  for (const file of filesIn('hand-written', '.html'))
    write(`hand-written-${basename(file, '.html')}`, readFileSync(join(sources, 'hand-written', file), 'utf8'));
}

mkdirSync(out, { recursive: true });
mkdirSync(work, { recursive: true });
await buildMjml();
await buildReactEmail();
await buildFoundation();
buildCerberus();
buildMaizzle();
await buildTextFirst();
buildHandWritten();
