// Small formatters for the text people and agents read - failure messages,
// reports, MCP answers - shared so that a duration or a time reads the same
// wherever it is printed.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `30 s`, `1.5 s`, `250 ms`: budgets as people write them. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 100) / 10;
  return `${Number.isInteger(seconds) ? seconds.toFixed(0) : seconds.toFixed(1)} s`;
}

/**
 * `16:49:08.123 UTC`: a time of day in UTC, and saying so, as mail summaries
 * show it too (inbox/describe.ts). CI logs print UTC, and a reader in
 * another zone must not take it for their own.
 */
export function clockTime(date: Date): string {
  return `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)} UTC`;
}

/** `1 attempt`, `3 attempts`: a count and its noun (nouns with a plain plural). */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `+1.204 s`: a time offset, always in seconds with ms. */
export function offset(ms: number): string {
  return `+${(ms / 1000).toFixed(3)} s`;
}
