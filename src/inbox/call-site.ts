// Where the test called a wait or a matcher, so that its failure points there.
//
// A wait fails deep in its polling loop, after many awaits: the error's own
// stack holds mailroom's frames and, at best (V8's async frames), the test's
// line somewhere below them. Runners and reporters show the first frame
// that is not a dependency's: the code frame and `file:line` of
// Playwright's line, list and HTML reporters, the `location` of its JSON
// one, Vitest's `❯` line. So each public wait and matcher takes its caller's
// frames synchronously, before its first await (as Playwright's own
// `expect` does), and an error it throws carries those frames instead of
// its own: the test's line comes first in every runner and reporter.
// mailroom's own frames are left out everywhere: they are never where the
// reader can fix anything.
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MailroomError } from '../client/errors.js';

/** A place in a source file, 1-based, as runners report one. */
export interface SourceLocation {
  readonly file: string;
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
}

/**
 * Enough frames to get past mailroom's own and a runner's `expect` to the
 * test's line; the capture is cheap, and it is formatted only when read.
 */
const CAPTURED_FRAMES = 40;

/**
 * This package's own sources: the built `dist/` and, through source maps,
 * `src/` (this file is two folders down in either).
 */
const OWN_FOLDERS = ['src', 'dist'].map((folder) => fileURLToPath(new URL(`../../${folder}/`, import.meta.url)));

const FRAME = /^\s*at (?:.*? \()?(.+?):(\d+):(\d+)\)?$/;

/** The caller's frames of one public call, captured when the call was made. */
export class CallSite {
  readonly #holder: { stack?: string } = {};
  #frames: readonly string[] | undefined;

  private constructor() {}

  /** Takes the caller's frames; call it first thing, before any await. */
  static capture(this: void): CallSite {
    const site = new CallSite();
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = CAPTURED_FRAMES;
    try {
      Error.captureStackTrace(site.#holder, CallSite.capture);
    } finally {
      Error.stackTraceLimit = limit;
    }
    return site;
  }

  /** The caller's frames as `    at …` lines, mailroom's own left out. */
  get frames(): readonly string[] {
    this.#frames ??= (this.#holder.stack ?? '').split('\n').filter((line) => {
      const file = frameFile(line);
      return file !== undefined && !OWN_FOLDERS.some((own) => file.startsWith(own));
    });
    return this.#frames;
  }

  /** The first frame outside any dependency (`node_modules`) and Node itself: the test's line, or its helper's. */
  get location(): SourceLocation | undefined {
    for (const line of this.frames) {
      const match = FRAME.exec(line);
      if (!match) continue;
      const file = toPath(match[1]!);
      if (file.startsWith('node:') || file.includes(`${sep}node_modules${sep}`)) continue;
      return { file, line: Number(match[2]), column: Number(match[3]) };
    }
    return undefined;
  }

  /** Runs `work`; an error it throws (synchronously or not) points at this call site. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw this.stamp(error);
    }
  }

  /**
   * Gives `error` this call site's frames in place of its own. Only
   * mailroom's refusals and failures (its error family, and the
   * `TypeError`/`RangeError` that name a bad argument): any other error is
   * a bug, and its own frames are what a report of it needs.
   */
  stamp<E>(error: E): E {
    if (!(error instanceof MailroomError || error instanceof TypeError || error instanceof RangeError)) return error;
    const frames = this.frames;
    if (frames.length === 0) return error;
    try {
      error.stack = `${error.name}: ${error.message}\n${frames.join('\n')}`;
    } catch {
      // A frozen error keeps its own stack.
    }
    return error;
  }
}

function frameFile(line: string): string | undefined {
  const match = FRAME.exec(line);
  return match ? toPath(match[1]!) : undefined;
}

/** ES modules' frames name a `file://` URL; reporters and editors want a path. */
function toPath(file: string): string {
  if (!file.startsWith('file://')) return file;
  try {
    return fileURLToPath(file);
  } catch {
    return file;
  }
}
