// `html`: what the chosen clients do with the HTML and CSS the mail uses,
// from the caniemail.com data. caniemail finds the features (the markup,
// inline styles and <style> blocks: html-findings.ts; what it has no entry
// for: html-content.ts); each is kept only where it fits what the mail
// does (html-uses.ts), and judged by its effect where a client lacks it
// (html-effects.ts): an error where the mail depends on it (its layout
// falls apart, or content is lost), a warning where it only looks or
// behaves otherwise, nothing where ignoring it is the fallback the mail was
// written for. An error is one feature at one place; a warning is one
// feature, wherever it is, since it is a trait of the mail's design. Beside
// the problems, each chosen client gets a support score (support-score.ts).
import { loadCaniemail, supportOf, type Caniemail, type FeatureData } from './caniemail-data.js';
import { excerpt, type HtmlReading } from './html-reading.js';
import { roleOf, insteadOf, type Role } from './html-effects.js';
import { findContent } from './html-content.js';
import { findFeatures, type Finding, type Place } from './html-findings.js';
import { noteApplies, useAt, type Use } from './html-uses.js';
import { DEFAULT_CLIENTS, type AcceptedFeature, type HtmlCheckOptions } from './options.js';
import { problem, type CheckableMail, type MailProblem } from './problem.js';
import { supportScores, type ClientGroup, type ClientSupport, type JudgedUse } from './support-score.js';

export interface HtmlCheckResult {
  readonly problems: MailProblem[];
  readonly support: ClientSupport[];
}

/**
 * The clients that render with Word (Outlook for Windows, and Windows Mail,
 * which renders as Outlook 2007–2019 do): they read `<!--[if mso]>`
 * comments, skip `<!--[if !mso]><!-->` parts, and draw VML backgrounds.
 */
const WORD_ENGINE = ['outlook.windows', 'outlook.windows-mail'];
/** What a VML background (MJML's and backgrounds.cm's) stands in for in Word. */
const BACKGROUNDS = ['css-background', 'css-background-image', 'css-background-size', 'css-background-position', 'css-background-repeat', 'html-background'];

/** One feature in one client at one place, judged. */
interface Verdict {
  readonly finding: Finding;
  readonly client: string;
  readonly level: 'none' | 'partial';
  readonly role: Role;
  readonly notes: readonly string[];
}

export async function checkHtml(mail: CheckableMail, reading: HtmlReading, options: HtmlCheckOptions = {}): Promise<HtmlCheckResult> {
  if (mail.html.trim() === '') return { problems: [], support: [] };
  const caniemail = await loadCaniemail();
  const requested = options.clients ?? DEFAULT_CLIENTS;
  const globs = clientGlobs(requested, caniemail.families);
  const groups = clientGroups(requested, globs, caniemail);
  const clients = [...new Set(groups.flatMap((group) => group.members))];
  const accepted = acceptedFeatures(options.accept ?? [], caniemail);
  const styleSupport = caniemail.bySlug.get('html-style');

  const verdicts: Verdict[] = [];
  for (const finding of [...findFeatures(caniemail, mail.html, reading, globs), ...findContent(caniemail, reading)]) {
    const use = useAt(finding.feature, finding.place, reading, caniemail.features);
    if (use === undefined) continue;
    for (const client of clients) {
      const verdict = judge(finding, use, client, (c) => (styleSupport ? supportOf(styleSupport, c).level : 'full'));
      if (verdict) verdicts.push(verdict);
    }
  }

  // What the client shows: an enhancement it ignores is what the mail was written to look like there, so it costs nothing.
  const uses: JudgedUse[] = verdicts
    .filter((v) => v.role !== 'enhances')
    .map(({ finding, client, level }) => ({
      slug: finding.feature.slug,
      title: finding.feature.title,
      place: finding.place.offset,
      client,
      level,
    }));
  const problems = [...errorsOf(verdicts, reading), ...warningsOf(verdicts, reading)].flatMap((p) => acceptedAs(p, accepted));
  return { problems, support: supportScores(groups, uses, reading.bodyElements) };
}

/** What a client that lacks the feature at this place does to the mail; undefined where it lacks nothing, or never reads the place. */
function judge(finding: Finding, use: Use, client: string, styleLevel: (client: string) => string): Verdict | undefined {
  const support = supportOf(finding.feature, client);
  if (support.level === 'full' || support.level === 'unknown') return undefined;
  // What the client never reads: a hidden preheader, the part for other clients than Outlook for Windows, a <style> block without <style>.
  if (use.element?.hidden) return undefined;
  if (WORD_ENGINE.includes(client) && (use.element?.notMso || (use.reading.vmlBackgrounds && BACKGROUNDS.includes(finding.feature.slug)))) return undefined;
  if (use.inStyleBlock && styleLevel(client) === 'none') return undefined;
  let level: 'none' | 'partial' = support.level;
  const judged = support.notes.map((note) => ({ note, applies: noteApplies(note, use) }));
  if (judged.some((j) => j.applies === 'lacks')) level = 'none';
  const notes = judged.filter((j) => j.applies !== false).map((j) => j.note);
  // Support whose every note is about a case the mail does not use: the mail gets what it asks for.
  if (support.notes.length > 0 && notes.length === 0) return undefined;
  const role = finding.breaks !== undefined ? 'breaks' : roleOf(finding.feature.slug, use);
  return { finding, client, level, role, notes };
}

/** An error per feature and place where a client lacking it breaks the mail. */
function errorsOf(verdicts: readonly Verdict[], reading: HtmlReading): MailProblem[] {
  const groups = new Map<string, Verdict[]>();
  for (const v of verdicts) {
    if (v.role !== 'breaks' || v.level !== 'none') continue;
    const key = `${v.finding.feature.slug}\n${v.finding.place.offset}`;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return [...groups.values()].map((group) => {
    const { finding } = group[0]!;
    const lacking = clientNames(group);
    const where = placeName(finding.place, reading);
    return problem({
      check: 'html',
      severity: 'error',
      message: `${finding.feature.title} is not supported by ${lacking.join(', ')} (${where}): such a client ${finding.breaks ?? insteadOf(finding.feature.slug)}.`,
      fix: [
        `Give ${lacking.length === 1 ? 'that client' : 'those clients'} a fallback (a table layout, an image, a link to a page), or accept the feature: html.accept [{ feature: '${finding.feature.slug}', reason: '…' }]`,
        notesText(group),
        finding.feature.url ? `; see ${finding.feature.url}` : '',
        '.',
      ].join(''),
      feature: finding.feature.title,
      clients: lacking,
      where,
    });
  });
}

/** A warning per feature, wherever it is, where a client lacking it (or supporting it in part) changes how the mail looks or works. */
function warningsOf(verdicts: readonly Verdict[], reading: HtmlReading): MailProblem[] {
  const groups = new Map<string, Verdict[]>();
  for (const v of verdicts) {
    if (v.role === 'enhances' || (v.role === 'breaks' && v.level === 'none')) continue;
    const key = v.finding.feature.slug;
    groups.set(key, [...(groups.get(key) ?? []), v]);
  }
  return [...groups.values()].map((group) => {
    const { finding } = group[0]!;
    const lacking = clientNames(group.filter((v) => v.level === 'none'));
    const partly = clientNames(group.filter((v) => v.level === 'partial' && !lacking.includes(v.client)));
    const places = [...new Set(group.map((v) => v.finding.place.offset))];
    const first = placeName(finding.place, reading);
    const where = places.length === 1 ? first : `${places.length} places, the first ${first}`;
    const how = [lacking.length > 0 ? `not supported by ${lacking.join(', ')}` : '', partly.length > 0 ? `only partly supported by ${partly.join(', ')}` : '']
      .filter(Boolean)
      .join(', and ');
    const instead = lacking.length > 0 ? `: such a client ${finding.breaks ?? insteadOf(finding.feature.slug)}` : '';
    return problem({
      check: 'html',
      severity: 'warning',
      message: `${finding.feature.title} is ${how} (${where})${instead}.`,
      fix: ['Nothing breaks: make sure the mail still reads well there', notesText(group), finding.feature.url ? `; see ${finding.feature.url}` : '', '.'].join(
        '',
      ),
      feature: finding.feature.title,
      clients: [...lacking, ...partly].sort(),
      where,
    });
  });
}

function clientNames(verdicts: readonly Verdict[]): string[] {
  return [...new Set(verdicts.map((v) => v.client))].sort();
}

/** The caniemail notes that apply, plain, at most two. */
function notesText(verdicts: readonly Verdict[]): string {
  const notes = [...new Set(verdicts.flatMap((v) => v.notes))].slice(0, 2).map(plainNote);
  return notes.length === 0 ? '' : ` (caniemail: ${notes.join(' ')})`;
}

/** `line 12: <div style="display:flex">`; for CSS in a <style> block, its line and the declaration or rule. */
function placeName(place: Place, reading: HtmlReading): string {
  const line = reading.lines.lineOf(place.offset);
  if (place.kind === 'stylesheet') return `the <style> block at line ${line}`;
  if (place.kind === 'css') return `line ${line}, in a <style> block: ${excerpt(place.text.replace(/\s*\{[\s\S]*$/, ''))}`;
  const rest = reading.lines.line(line).slice(place.offset - reading.lines.offsetOf(line, 1));
  const end = rest.indexOf('>');
  return `line ${line}: ${excerpt(end === -1 ? rest : rest.slice(0, end + 1))}`;
}

/** caniemail's notes are Markdown; the failure text is plain. */
function plainNote(note: string): string {
  return note.replace(/\[([^\]]+)\]\(([^)]+)\)/g, '$1 <$2>').replace(/`/g, '');
}

/** A problem as the team's `accept` makes it: a warning carrying the reason, or none. */
function acceptedAs(p: MailProblem, accepted: ReadonlyMap<string, AcceptedFeature>): MailProblem[] {
  const entry = p.feature === undefined ? undefined : accepted.get(p.feature);
  if (entry === undefined) return [p];
  if (entry.as === 'ignore') return [];
  return [problem({ ...p, severity: 'warning', message: `${p.message} Accepted: ${entry.reason}` })];
}

/** The accepted features by title; a name caniemail (or mailroom) does not know is an error naming it. */
function acceptedFeatures(accept: readonly AcceptedFeature[], caniemail: Caniemail): Map<string, AcceptedFeature> {
  const byName = new Map<string, FeatureData | { title: string }>();
  for (const feature of caniemail.features) {
    byName.set(feature.slug.toLowerCase(), feature);
    byName.set(feature.title.toLowerCase(), feature);
  }
  for (const tag of ['script', 'iframe', 'embed', 'canvas']) {
    byName.set(`html-${tag}`, { title: `<${tag}> element` });
    byName.set(`<${tag}> element`, { title: `<${tag}> element` });
  }
  const accepted = new Map<string, AcceptedFeature>();
  accept.forEach((entry, i) => {
    const feature = byName.get(entry.feature.trim().toLowerCase());
    if (feature === undefined)
      throw new TypeError(
        `Unknown feature ${JSON.stringify(entry.feature)} in html.accept[${i}].feature: give caniemail's slug, as in its page's URL (css-display-flex), or the feature as a problem names it (display:flex)`,
      );
    accepted.set(feature.title, entry);
  });
  return accepted;
}

/** Families (`gmail`) become caniemail globs (`gmail.*`); names and globs with a dot pass as they are. */
export function clientGlobs(clients: readonly string[], families: readonly string[]): string[] {
  return clients.map((client) => {
    if (client.includes('.') || client === '*') return client;
    if (!families.includes(client)) throw new TypeError(`Unknown mail client family ${JSON.stringify(client)} in html.clients; known: ${families.join(', ')}`);
    return `${client}.*`;
  });
}

/** Each client as the options name it, with caniemail's clients it stands for (a glob that matches none is an error naming it). */
function clientGroups(requested: readonly string[], globs: readonly string[], caniemail: Caniemail): ClientGroup[] {
  const all = Object.entries(caniemail.bySlug.get('html-div')?.stats ?? {}).flatMap(([family, platforms]) =>
    Object.keys(platforms).map((p) => `${family}.${p}`),
  );
  return requested.map((client, i) => {
    const pattern = new RegExp(`^${globs[i]!.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
    const members = all.filter((name) => pattern.test(name)).sort();
    if (members.length === 0) throw new TypeError(`Unknown mail client ${JSON.stringify(client)} in html.clients: no caniemail client matches it`);
    return { client, members };
  });
}
