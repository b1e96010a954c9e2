// Where a call sits in a source file, as runners report it: the 1-based line
// of the one line that holds `call`, and the column of the method name in it
// (V8's position of a call, which Playwright's location and code frame use).
import { readFileSync } from 'node:fs';

export interface CallLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** The whole line, as a code frame prints it. */
  readonly text: string;
}

/** `call` is the text from the method name on, e.g. `expectMail({ subject: 'Invoice' }`. */
export function locate(file: string, call: string): CallLocation {
  const lines = readFileSync(file, 'utf8').split('\n');
  const found = lines.flatMap((text, i) => (text.includes(call) ? [i] : []));
  if (found.length !== 1) throw new Error(`Expected exactly one line of ${file} to hold ${JSON.stringify(call)}, found ${found.length}`);
  const line = found[0]!;
  return { file, line: line + 1, column: lines[line]!.indexOf(call) + 1, text: lines[line]! };
}
