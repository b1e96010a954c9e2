// The examples of the README and the guides (docs/*.md) as the files of one
// project. A ```ts block whose first line is a path comment
// (`// playwright.config.ts`) is the whole of that file, word for word; so
// is a ```js block whose path ends in .js, .mjs or .cjs (Jest's configs). The
// pack check writes them into the project it installs the packed package
// into, type-checks them and runs both runners there, so no page can drift
// from what works. A block without a path comment is a fragment: shown, not run.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One file of the examples' project. */
export interface ReadmeFile {
  /** Relative to the project, e.g. `test/mailroom.setup.ts`. */
  readonly path: string;
  readonly text: string;
  /** The page that shows it, relative to the repository (`README.md`, `docs/assertions.md`). */
  readonly page: string;
  /** The page's line of the path comment, for messages. */
  readonly line: number;
}

const FENCE = /^```([\w-]*)\s*$/;
const PATH_COMMENT = /^\/\/ ((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mts|cts))$/;
/** A ```js block's path comment: a config file a runner loads as JavaScript (Jest's). */
const JS_PATH_COMMENT = /^\/\/ ((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:js|mjs|cjs))$/;

/** Every path-headed TypeScript block of `markdown` (the text of `page`), in order; a path given twice is an error. */
export function readmeFiles(markdown: string, page = 'README.md'): ReadmeFile[] {
  const lines = markdown.split('\n');
  const files: ReadmeFile[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${page}: the code block opened on line ${i + 1} is never closed`);
    const body = lines.slice(i + 1, end);
    const pattern = open[1] === 'ts' ? PATH_COMMENT : open[1] === 'js' ? JS_PATH_COMMENT : undefined;
    const path = pattern?.exec(body[0] ?? '')?.[1];
    if (path !== undefined) {
      if (path.split('/').includes('..')) throw new Error(`${page} line ${i + 2}: ${path} leaves the project`);
      const earlier = files.find((f) => f.path === path);
      if (earlier) throw new Error(`${page} line ${i + 2}: ${path} was already given on line ${earlier.line}; a file is one block`);
      files.push({ path, text: `${body.join('\n')}\n`, page, line: i + 2 });
    }
    i = end;
  }
  return files;
}

/** The pages whose examples run: README.md and every guide in docs/ (not the generated docs/api/). */
export function examplePages(root: string): string[] {
  const guides = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...guides];
}

/**
 * The files of every page under `root`, in page order; a path shown by two
 * pages is an error naming both, since the project holds one file per path.
 */
export function exampleFiles(root: string): ReadmeFile[] {
  const files: ReadmeFile[] = [];
  for (const page of examplePages(root)) {
    for (const file of readmeFiles(readFileSync(join(root, page), 'utf8'), page)) {
      const earlier = files.find((f) => f.path === file.path);
      if (earlier) throw new Error(`${page} line ${file.line}: ${file.path} is already ${earlier.page} line ${earlier.line}; each file is shown by one page`);
      files.push(file);
    }
  }
  return files;
}

/**
 * The README's fixed ports moved to free ones, so a run never meets a server
 * someone left on the default ports. Each must occur in `text` (as a whole
 * number): a README that drops one is caught rather than half-moved.
 */
export function movePorts(file: ReadmeFile, moves: ReadonlyMap<number, number>): ReadmeFile {
  let { text } = file;
  for (const [from, to] of moves) {
    const pattern = new RegExp(`(?<![\\w.])${from}(?!\\w)`, 'g');
    if (!pattern.test(text))
      throw new Error(`${file.page}: ${file.path} (line ${file.line}) no longer mentions port ${from}; update scripts/pack-check.ts with it`);
    text = text.replace(pattern, String(to));
  }
  return { ...file, text };
}
