// Which line of a text an offset is on, and the text of a line, for the
// `where` of a problem (`line 12: <img src="logo.png">`). One pass collects
// where each line starts; an offset's line is then a binary search, a
// line's text a slice. Splitting the text again for each question made the
// checks quadratic in the size of the HTML: a 400 KB mail of short tags
// held the server's thread for minutes (docs/security.md, "Mail checks").
// Lines end at '\n' only, as caniemail counts them (its positions are read
// with this index too).
export class LineIndex {
  readonly #text: string;
  /** Where each line starts: line n (1-based) at `#starts[n - 1]`. */
  readonly #starts: number[];

  constructor(text: string) {
    this.#text = text;
    const starts = [0];
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', newline + 1)) starts.push(newline + 1);
    this.#starts = starts;
  }

  /** The line (1-based) the character at `offset` is on. */
  lineOf(offset: number): number {
    const starts = this.#starts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  /** The offset of a line and column (both 1-based), as caniemail gives a position. */
  offsetOf(line: number, column: number): number {
    const starts = this.#starts;
    const n = Math.min(Math.max(1, Math.trunc(line)), starts.length);
    return Math.min(starts[n - 1]! + Math.max(0, column - 1), this.#text.length);
  }

  /** Line `n`'s text (1-based), without its '\n'; '' for a line the text does not have. */
  line(n: number): string {
    const starts = this.#starts;
    if (!Number.isInteger(n) || n < 1 || n > starts.length) return '';
    const end = n < starts.length ? starts[n]! - 1 : this.#text.length;
    return this.#text.slice(starts[n - 1], end);
  }
}
