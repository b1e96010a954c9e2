// How much of a mail each client shows as written, as a percentage, the way
// Mailpit scores a mail's HTML (its html-check): for each feature the mail
// uses, the share of the client's platforms (caniemail's latest result for
// each) that lack it and the share that support it in part, each weighed by
// how much of the mail uses it (its places over the elements of the body,
// at most 1; an at-rule or a selector of a <style> block 0.05, since its
// reach cannot be counted); the score is 100 less the worst weighed lack
// and the worst weighed partial support. So one feature the mail leans on
// everywhere costs more than many used once. caniemail's data has no market
// share, so each platform of a family (Gmail's webmail, iOS and Android
// apps, …) counts the same. It scores what a client shows, so what the html
// check finds costs nothing where it costs the mail nothing: an enhancement
// the client ignores (html-effects.ts), what the client never reads (a
// hidden preheader, the part of the mail for other clients), a caniemail
// note that does not apply (html-uses.ts). A feature the mail accepts
// (html.accept) still counts: it is still missing.

/** One feature in one client, as the html check judged it at one place. */
export interface JudgedUse {
  readonly slug: string;
  readonly title: string;
  readonly place: number;
  readonly client: string;
  readonly level: 'none' | 'partial';
}

/** A client as `html.clients` names it, and caniemail's clients it stands for. */
export interface ClientGroup {
  readonly client: string;
  readonly members: readonly string[];
}

export interface ClientSupport {
  /** As `html.clients` names it: a family (`outlook`), or a caniemail name or glob. */
  readonly client: string;
  /** 0 to 100: how much of the mail this client shows as written. */
  readonly score: number;
  /** The feature that costs the most, when one costs anything. */
  readonly worst?: string;
}

/** At-rules and selectors cannot be counted by place (Mailpit weighs pseudo-classes and at-rules so). */
const UNCOUNTED_WEIGHT = 0.05;

export function supportScores(groups: readonly ClientGroup[], uses: readonly JudgedUse[], elements: number): ClientSupport[] {
  const places = new Map<string, Set<number>>();
  for (const use of uses) (places.get(use.slug) ?? places.set(use.slug, new Set()).get(use.slug)!).add(use.place);
  const weightOf = (slug: string, title: string) =>
    title.startsWith('@') || slug.startsWith('css-pseudo') || slug.startsWith('css-selector') || slug === 'html-style'
      ? UNCOUNTED_WEIGHT
      : Math.min(1, (places.get(slug)?.size ?? 0) / Math.max(1, elements));

  return groups.map(({ client, members }) => {
    const worstLevel = new Map<string, { title: string; lacking: Set<string>; partly: Set<string> }>();
    for (const use of uses) {
      if (!members.includes(use.client)) continue;
      const feature = worstLevel.get(use.slug) ?? worstLevel.set(use.slug, { title: use.title, lacking: new Set(), partly: new Set() }).get(use.slug)!;
      (use.level === 'none' ? feature.lacking : feature.partly).add(use.client);
    }
    let unsupported = 0;
    let partial = 0;
    let worst: { title: string; cost: number } | undefined;
    for (const [slug, { title, lacking, partly }] of worstLevel) {
      const weight = weightOf(slug, title);
      const lack = (lacking.size / members.length) * weight * 100;
      const part = ([...partly].filter((c) => !lacking.has(c)).length / members.length) * weight * 100;
      unsupported = Math.max(unsupported, lack);
      partial = Math.max(partial, part);
      if (lack + part > (worst?.cost ?? 0)) worst = { title, cost: lack + part };
    }
    const score = Math.round(Math.max(0, 100 - unsupported - partial) * 10) / 10;
    return score < 100 && worst ? { client, score, worst: worst.title } : { client, score };
  });
}

/** `gmail 100%, outlook 93.5% (display:flex), …`: the scores as the failure text and the report show them. */
export function formatScores(support: readonly ClientSupport[]): string {
  return support.map((s) => `${s.client} ${s.score}%${s.worst ? ` (${s.worst})` : ''}`).join(', ');
}
