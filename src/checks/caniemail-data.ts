// The caniemail package, loaded once, and what its data says of a feature
// in a client. It is the one place that touches the package's data.
//
// A workaround on its private part, pinned to caniemail 2.0.2: caniemail()
// throws (`RangeError: Feature "word-wrap" not found on "gmail.ios"`) when
// the data has no test of a feature in one of the chosen clients, so any
// mail using `word-wrap` (Foundation for Emails' CSS does) could not be
// checked at all. Before its first run, each feature gets an "unknown"
// result for every client its data leaves out; the html check reports
// nothing for an unknown. The exported `rawData` is the object caniemail
// reads, so filling it in is enough. caniemail-data.test.ts fails when an
// upgrade changes either side of this.
type Package = typeof import('./caniemail.js');

/** A feature as caniemail's data has it: `stats` is family → platform → version → result (`y`, `n`, `a #2`, `u`). */
export interface FeatureData {
  readonly slug: string;
  readonly title: string;
  readonly url: string;
  readonly category: string;
  readonly stats: Record<string, Record<string, Record<string, string>>>;
  readonly notes_by_num?: Readonly<Record<string, string>> | null;
}

export interface Caniemail {
  /** caniemail's own check: the features a mail's HTML or CSS uses, with where, for the clients given. */
  readonly run: Package['caniemail'];
  readonly features: readonly FeatureData[];
  readonly byTitle: ReadonlyMap<string, FeatureData>;
  readonly bySlug: ReadonlyMap<string, FeatureData>;
  /** The client families (`gmail`, `outlook`, …). */
  readonly families: readonly string[];
}

/** What the data says of one feature in one client, from its latest test. */
export interface Support {
  readonly level: 'full' | 'partial' | 'none' | 'unknown';
  /** The notes of that result, as caniemail writes them (Markdown). */
  readonly notes: readonly string[];
}

let loading: Promise<Caniemail> | undefined;

/** The package; its data is 3.6 MB of JSON, so it is loaded on the first html check, not with mailroom. */
export function loadCaniemail(): Promise<Caniemail> {
  return (loading ??= import('./caniemail.js').then((module) => {
    const features = module.rawData.data as unknown as FeatureData[];
    fillUntested(features);
    return {
      run: module.caniemail,
      features,
      byTitle: new Map(features.map((feature) => [feature.title, feature])),
      bySlug: new Map(features.map((feature) => [feature.slug, feature])),
      families: Object.keys(module.rawData.nicenames.family),
    };
  }));
}

/** The result caniemail has no test for: `u`, which its reader takes as partial and the html check as unknown. */
const UNTESTED = 'u';

function fillUntested(features: readonly FeatureData[]): void {
  const clients = new Set(
    features.flatMap((feature) =>
      Object.entries(feature.stats).flatMap(([family, platforms]) => Object.keys(platforms).map((platform) => `${family}.${platform}`)),
    ),
  );
  for (const feature of features) {
    for (const client of clients) {
      const [family = '', platform = ''] = client.split('.');
      const platforms = (feature.stats[family] ??= {});
      platforms[platform] ??= { untested: UNTESTED };
    }
  }
}

/** The latest result of a feature in a client (`outlook.windows`), as caniemail reads it. */
export function supportOf(feature: FeatureData, client: string): Support {
  const [family = '', platform = ''] = client.split('.');
  const versions = feature.stats[family]?.[platform];
  if (versions === undefined) return { level: 'unknown', notes: [] };
  const latest = Object.keys(versions).sort().at(-1);
  const result = latest === undefined ? UNTESTED : (versions[latest] ?? UNTESTED);
  const notes = [...result.matchAll(/#(\d+)/g)].map((match) => feature.notes_by_num?.[match[1] ?? ''] ?? '').filter((note) => note !== '');
  const level = result.startsWith('y') ? 'full' : result.startsWith('n') ? 'none' : result.startsWith('a') ? 'partial' : 'unknown';
  return { level, notes };
}
