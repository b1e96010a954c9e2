// `html`: the HTML and CSS features of the mail that the chosen clients do
// not support, from the caniemail.com data (the `caniemail` package, bundled
// into the build (caniemail.ts), which reads both the markup and the CSS,
// inline and in <style> blocks). A feature a client does not support at all
// is an error; one it supports in part, a warning. Each problem is one feature at one place, naming every client that
// lacks it, so a feature Outlook's six versions all lack reads once.
import { DEFAULT_CLIENTS, type HtmlCheckOptions } from './options.js';
import { excerpt, type HtmlReading } from './html-reading.js';
import type { LineIndex } from './line-index.js';
import { problem, type CheckableMail, type MailProblem, type Severity } from './problem.js';

type Caniemail = typeof import('./caniemail.js');

// The data is 3.6 MB of JSON: loaded on the first html check, not with the package.
let loading: Promise<Caniemail> | undefined;
function caniemailModule(): Promise<Caniemail> {
  return (loading ??= import('./caniemail.js'));
}

export async function checkHtml(mail: CheckableMail, reading: HtmlReading, options: HtmlCheckOptions = {}): Promise<MailProblem[]> {
  if (mail.html.trim() === '') return [];
  const caniemail = await caniemailModule();
  const clients = clientGlobs(options.clients ?? DEFAULT_CLIENTS, Object.keys(caniemail.rawData.nicenames.family));
  const result = caniemail.caniemail({ clients: clients as Parameters<Caniemail['caniemail']>[0]['clients'], html: mail.html });
  const urls = new Map(caniemail.rawData.data.map((feature) => [feature.title, feature.url]));

  const groups = new Map<string, { severity: Severity; title: string; where: string; clients: string[]; note: string | undefined }>();
  const whereOf = placeNamer(reading.lines);
  const add = (severity: Severity, issues: typeof result.issues.errors) => {
    for (const [client, list] of issues) {
      for (const issue of list) {
        // A bare <body> loses nothing when a client drops it (caniemail: "replaced by a <div>"); one with a background or style does.
        if (issue.title === '<body> element' && !reading.bodyHasAttributes) continue;
        const where = whereOf(issue.position);
        const key = `${severity}\n${issue.title}\n${where}`;
        const group = groups.get(key) ?? { severity, title: issue.title, where, clients: [], note: issue.notes[0] };
        group.clients.push(client);
        groups.set(key, group);
      }
    }
  };
  add('error', result.issues.errors);
  add('warning', result.issues.warnings);

  return [...groups.values()].map(({ severity, title, where, clients: lacking, note }) => {
    const url = urls.get(title);
    const how = severity === 'error' ? 'is not supported by' : 'is only partly supported by';
    return problem({
      check: 'html',
      severity,
      message: `${title} ${how} ${lacking.sort().join(', ')} (${where}).`,
      fix: [
        severity === 'error' ? 'Use markup those clients support, or a fallback for them' : 'Make sure the mail still reads well without it in those clients',
        note ? ` (caniemail: ${plainNote(note)})` : '',
        url ? `; see ${url}` : '',
        '.',
      ].join(''),
      feature: title,
      clients: lacking,
      where,
    });
  });
}

/** Families (`gmail`) become caniemail globs (`gmail.*`); names and globs with a dot pass as they are. */
export function clientGlobs(clients: readonly string[], families: readonly string[]): string[] {
  return clients.map((client) => {
    if (client.includes('.') || client === '*') return client;
    if (!families.includes(client)) throw new TypeError(`Unknown mail client family ${JSON.stringify(client)} in html.clients; known: ${families.join(', ')}`);
    return `${client}.*`;
  });
}

interface Position {
  readonly start: { readonly line: number; readonly column: number };
  readonly source?: string;
}

/**
 * Names the place of a caniemail position. The position is a line and
 * column of the HTML (1-based), except for CSS read out of a <style> block,
 * where it is a position in that CSS (marked by a `source` field). Each
 * place is named once: the features of one element share its position, for
 * every client.
 */
function placeNamer(lines: LineIndex): (position: Position | undefined) => string {
  const named = new Map<string, string>();
  return (position) => {
    if (!position) return 'in a <style> block';
    if (position.source !== undefined) return `in a <style> block, its line ${position.start.line}`;
    const { line, column } = position.start;
    const key = `${line}:${column}`;
    let where = named.get(key);
    if (where === undefined) {
      const rest = lines.line(line).slice(column - 1);
      const end = rest.indexOf('>');
      where = `line ${line}: ${excerpt(end === -1 ? rest : rest.slice(0, end + 1))}`;
      named.set(key, where);
    }
    return where;
  };
}

/** caniemail's notes are markdown; the failure text is plain. */
function plainNote(note: string): string {
  return note.replace(/\[([^\]]+)\]\(([^)]+)\)/g, '$1 <$2>').replace(/`/g, '');
}
