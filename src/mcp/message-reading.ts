// What an agent needs from a message besides its headers: the links (with
// the words on them) and the one-time codes, read by the same code as the
// client's `Mail.links` and `Mail.codes` (contract/extract.ts), and the HTML
// body as readable text when there is no text part. Models misread codes out
// of raw HTML (an order number, a date), so the tools hand them over ready.
import { extractCodes, extractLabelledLinks, type LabelledLink } from '../contract/extract.js';
import { readableHtml } from '../contract/readable-html.js';
import type { WireMessage } from '../contract/wire.js';

/** A message as the tools return it: the HTTP API's fields plus what was read out of them. */
export type ReadMessage = WireMessage & { readonly links: readonly LabelledLink[]; readonly codes: readonly string[] };

/** At most this many links are listed in the text content (all are in the structured content). */
const LISTED_LINKS = 20;

export function readMessage(message: WireMessage): ReadMessage {
  const text = message.text ?? '';
  const html = message.html ?? '';
  return { ...message, links: extractLabelledLinks(html, text), codes: extractCodes(text, html) };
}

/** The body as an agent reads it: the text part, else the HTML part rendered readably (links after their words). */
export function readableBody(message: WireMessage): string {
  if (message.text !== null && message.text.trim() !== '') return message.text.trimEnd();
  if (message.html !== null) return `(no text part; the HTML part, as a reader sees it:)\n${readableHtml(message.html)}`;
  return '(empty body)';
}

/** The short block after the body: the links with their words, and the codes. */
export function linksAndCodesBlock(message: ReadMessage): string {
  const lines: string[] = [];
  if (message.codes.length > 0) {
    const [likeliest, ...others] = message.codes;
    lines.push(`One-time code: ${likeliest}${others.length > 0 ? ` (other candidates, less likely: ${others.join(', ')})` : ''}`);
  } else lines.push('One-time code: none found');
  if (message.links.length === 0) lines.push('Links: none');
  else {
    lines.push(`Links (${message.links.length}):`);
    for (const link of message.links.slice(0, LISTED_LINKS)) lines.push(`- ${link.text ? `${JSON.stringify(link.text)}: ` : ''}${link.url}`);
    if (message.links.length > LISTED_LINKS) lines.push(`- … ${message.links.length - LISTED_LINKS} more in the structured content, field \`links\``);
  }
  return lines.join('\n');
}
