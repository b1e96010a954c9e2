// How the Redis store keeps a message's summary beside its source: a JSON
// array, positions in place of field names. It is kept once per message and
// published with every arrival; the names were about 30 bytes of each
// (bench/store-bytes.ts). A summary written as an object, by a server from
// before this, is read as it is.
import type { ParsedSummary } from '../base/parsed-mail.js';

export function encodeSummary(summary: ParsedSummary): string {
  return JSON.stringify([summary.from, summary.to, summary.subject, summary.preview]);
}

export function decodeSummary(json: string): ParsedSummary {
  const value = JSON.parse(json) as ParsedSummary | [string, string[], string, string];
  if (!Array.isArray(value)) return value;
  const [from, to, subject, preview] = value;
  return { from, to, subject, preview };
}
