// The README's examples as the files of one project. A ```ts block whose
// first line is a path comment (`// playwright.config.ts`) is the whole of
// that file, word for word. The pack check writes them into the project it
// installs the packed package into, type-checks them and runs both runners
// there, so the README cannot drift from what works.

/** One file of the README's project. */
export interface ReadmeFile {
  /** Relative to the project, e.g. `test/mailroom.setup.ts`. */
  readonly path: string;
  readonly text: string;
  /** The README line of the path comment, for messages. */
  readonly line: number;
}

const FENCE = /^```([\w-]*)\s*$/;
const PATH_COMMENT = /^\/\/ ((?:[\w.-]+\/)*[\w-]+(?:\.[\w-]+)*\.(?:ts|mts|cts))$/;

/** Every path-headed TypeScript block of `markdown`, in order; a path given twice is an error. */
export function readmeFiles(markdown: string): ReadmeFile[] {
  const lines = markdown.split('\n');
  const files: ReadmeFile[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`README.md: the code block opened on line ${i + 1} is never closed`);
    const body = lines.slice(i + 1, end);
    const path = open[1] === 'ts' ? PATH_COMMENT.exec(body[0] ?? '')?.[1] : undefined;
    if (path !== undefined) {
      if (path.split('/').includes('..')) throw new Error(`README.md line ${i + 2}: ${path} leaves the project`);
      const earlier = files.find((f) => f.path === path);
      if (earlier) throw new Error(`README.md line ${i + 2}: ${path} was already given on line ${earlier.line}; a file is one block`);
      files.push({ path, text: `${body.join('\n')}\n`, line: i + 2 });
    }
    i = end;
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
      throw new Error(`README.md: ${file.path} (line ${file.line}) no longer mentions port ${from}; update scripts/pack-check.ts with it`);
    text = text.replace(pattern, String(to));
  }
  return { ...file, text };
}
