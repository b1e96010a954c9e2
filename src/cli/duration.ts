// Durations as people type them on a command line: 500ms, 90s, 30m, 1h, 2d.
const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds, or undefined when the text is not a duration. A bare number is seconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(text);
  if (!match) return undefined;
  return Math.round(Number(match[1]) * UNITS[(match[2] ?? 's').toLowerCase()]!);
}
