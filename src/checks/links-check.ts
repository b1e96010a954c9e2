// `links`: every http(s) link in the HTML and the text part, fetched the way
// a link checker does: HEAD first (no body, no side effect on a well-behaved
// server), GET when HEAD is answered 400 or more (many servers refuse HEAD),
// redirects followed by hand up to a limit so the problem can name where the
// link ended up, each request bounded by a timeout, a few at a time. A final
// status of 400 or more, or no answer, is an error naming the link's text.
// An href that is not absolute can never work in a mail client: an error too,
// without a request.
//
// The mail names the links, and anyone can send mail, so the checker is
// held back: each hop goes only where link-destinations.ts allows (never
// link-local or a metadata service; loopback and private hosts per
// `allowPrivate`), and a refused one is reported in the same words whatever
// is there, so the report is no port scanner. The credentials a test gives
// go only where link-credentials.ts says. At most `maxLinks` links are
// fetched, within `totalTimeout`; the rest are one warning.
import { STATUS_CODES } from 'node:http';
import type { LookupFunction } from 'node:net';
import { LinkifyIt } from 'linkify-it';
import type { Dispatcher } from 'undici';
import { isDestinationRefused } from '../contract/destinations.js';
import { formatDuration } from '../contract/format.js';
import type { HtmlReading } from './html-reading.js';
import { requestHeaders } from './link-credentials.js';
import { linkDestinations, type LinkDestinations } from './link-destinations.js';
import {
  DEFAULT_LINK_CONCURRENCY,
  DEFAULT_LINK_TIMEOUT_MS,
  DEFAULT_LINKS_TOTAL_TIMEOUT_MS,
  DEFAULT_MAX_LINKS,
  DEFAULT_MAX_REDIRECTS,
  type LinkCheckOptions,
} from './options.js';
import { problem, type CheckableMail, type MailProblem } from './problem.js';

const linkify = new LinkifyIt({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });

/** The text a URL found in the text part is named by. */
export const TEXT_PART = '(text part)';

interface Target {
  readonly url: string;
  /** Every text the URL is linked from, in document order. */
  readonly texts: string[];
}

/** How a request failed: no answer (and why), a destination the policy refuses, or the check's total time ran out first. */
type Failure = { readonly kind: 'no-answer'; readonly reason: string } | { readonly kind: 'refused' } | { readonly kind: 'not-checked' };

type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly finalUrl: string }
  | (Failure & { readonly finalUrl: string })
  | { readonly kind: 'too-many-redirects'; readonly finalUrl: string };

/** What every request of one check shares. */
interface LinkRun {
  readonly options: LinkCheckOptions;
  readonly destinations: LinkDestinations;
  readonly dispatcher: Dispatcher;
  readonly request: typeof import('undici').request;
  /** The caller's: stops the check, an error. */
  readonly outer: AbortSignal | undefined;
  /** The check's total time: the links not fetched by then are reported as not checked. */
  readonly total: AbortSignal;
}

const REFUSED_WORDS = "refused by the link checker's destination policy";

/** `resolve` stands in for DNS (tests). */
export async function checkLinks(
  mail: CheckableMail,
  reading: HtmlReading,
  options: LinkCheckOptions = {},
  signal?: AbortSignal,
  resolve?: LookupFunction,
): Promise<MailProblem[]> {
  const { targets, problems } = readTargets(mail, reading, options.skip);
  const maxLinks = options.maxLinks ?? DEFAULT_MAX_LINKS;
  const fetched = targets.slice(0, maxLinks);
  if (fetched.length === 0) return problems;
  const totalMs = options.totalTimeout ?? DEFAULT_LINKS_TOTAL_TIMEOUT_MS;
  // Loaded by the first link fetched, not with the module: the embedded
  // server carries the checks for /checks, and most never fetch a link.
  const { Agent, request } = await import('undici');
  const destinations = linkDestinations(options.allowPrivate ?? 'all', resolve);
  const dispatcher = new Agent({ connect: { lookup: destinations.lookup } });
  const run: LinkRun = { options, destinations, dispatcher, request, outer: signal, total: AbortSignal.timeout(totalMs) };
  let outcomes: Outcome[];
  try {
    outcomes = await inPool(fetched, options.concurrency ?? DEFAULT_LINK_CONCURRENCY, (target) =>
      run.total.aborted ? Promise.resolve({ kind: 'not-checked', finalUrl: target.url } as const) : fetchLink(target.url, run),
    );
  } finally {
    await dispatcher.destroy();
  }
  let outOfTime = 0;
  for (const [i, target] of fetched.entries()) {
    const outcome = outcomes[i]!;
    if (outcome.kind === 'not-checked') outOfTime++;
    else if (outcome.kind !== 'answered' || outcome.status >= 400) problems.push(linkProblem(target, outcome, options.timeout ?? DEFAULT_LINK_TIMEOUT_MS));
  }
  if (targets.length > maxLinks) {
    problems.push(
      notChecked(targets.length - maxLinks, `the mail has ${targets.length} distinct links and the check fetches at most ${maxLinks} (links.maxLinks)`),
    );
  }
  if (outOfTime > 0) problems.push(notChecked(outOfTime, `the check's total time, ${formatDuration(totalMs)}, ran out (links.totalTimeout)`));
  return problems;
}

/** The distinct http(s) URLs of the HTML and the text part not skipped, each with the texts it is linked from, and the hrefs that are no URL at all. */
function readTargets(mail: CheckableMail, reading: HtmlReading, skip: LinkCheckOptions['skip']): { targets: Target[]; problems: MailProblem[] } {
  const problems: MailProblem[] = [];
  const targets = new Map<string, Target>();
  const add = (raw: string, text: string) => {
    let url: string;
    try {
      url = new URL(raw).href;
    } catch {
      return;
    }
    if (isSkipped(url, skip)) return;
    const target = targets.get(url) ?? { url, texts: [] };
    if (!target.texts.includes(text)) target.texts.push(text);
    targets.set(url, target);
  };
  for (const link of reading.links) {
    if (/^https?:\/\//i.test(link.href)) add(link.href, link.text === '' ? '(no text)' : link.text);
    else if (!/^([a-z][a-z0-9+.-]*:|#)/i.test(link.href)) {
      problems.push(
        problem({
          check: 'links',
          severity: 'error',
          message: `The link ${JSON.stringify(link.text)} points to ${JSON.stringify(link.href)}, which is not an absolute URL and goes nowhere in a mail client (${link.where}).`,
          fix: 'Write the link as an absolute https:// URL (a template variable left empty shows up this way too).',
          url: link.href,
          text: link.text,
          where: link.where,
        }),
      );
    }
  }
  for (const match of linkify.match(mail.text) ?? []) if (/^https?:/i.test(match.url)) add(match.url, TEXT_PART);
  return { targets: [...targets.values()], problems };
}

function notChecked(count: number, why: string): MailProblem {
  return problem({
    check: 'links',
    severity: 'warning',
    message: `${count} ${count === 1 ? 'link' : 'links'} not checked: ${why}.`,
    fix: 'Skip the links you need not check (links.skip), or raise the limit.',
  });
}

function linkProblem(target: Target, outcome: Exclude<Outcome, { kind: 'not-checked' }>, timeoutMs: number): MailProblem {
  const named = `The link ${nameOf(target.texts)} → ${target.url}`;
  const via = outcome.finalUrl === target.url ? '' : ` was redirected to ${outcome.finalUrl}, which`;
  const text = target.texts.join(', ');
  if (outcome.kind === 'refused') {
    // The same words whatever is at the address (open, closed, nothing): no request was made, and the report says no more.
    return problem({
      check: 'links',
      severity: 'warning',
      message: `${named}${via ? `${via} was` : ' was'} not checked: ${REFUSED_WORDS}.`,
      fix: 'Link-local and cloud metadata addresses are never checked; loopback and private hosts only when allowed (links.allowPrivate in a test, --link-check-allow on mailroom serve).',
      url: target.url,
      text,
    });
  }
  if (outcome.kind === 'answered') {
    const statusText = STATUS_CODES[outcome.status] ?? '';
    return problem({
      check: 'links',
      severity: 'error',
      message: `${named}${via} answered ${outcome.status}${statusText ? ` ${statusText}` : ''}.`,
      fix: outcome.status >= 500 ? 'Fix the page it points to (it failed on the server).' : 'Fix the link, or the page it points to.',
      url: target.url,
      text,
      status: outcome.status,
    });
  }
  if (outcome.kind === 'too-many-redirects') {
    return problem({
      check: 'links',
      severity: 'error',
      message: `${named} redirects more than the limit (last to ${outcome.finalUrl}).`,
      fix: 'Link straight to the final page; look for a redirect loop.',
      url: target.url,
      text,
    });
  }
  const reason = outcome.reason === 'timeout' ? `no answer within ${formatDuration(timeoutMs)}` : `no answer: ${outcome.reason}`;
  return problem({
    check: 'links',
    severity: 'error',
    message: `${named}${via ? `${via} got` : ' got'} ${reason}.`,
    fix: 'Check the host in the link is right and the site is up (for a link to your app under test, that the test started it).',
    url: target.url,
    text,
  });
}

async function fetchLink(url: string, run: LinkRun): Promise<Outcome> {
  const maxRedirects = run.options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const origin = new URL(url).origin;
  let current = url;
  let ownOrigin = true;
  for (let hop = 0; hop <= maxRedirects; hop++) {
    const at = new URL(current);
    // Once the link left its origin its own credentials stay behind, even if a later hop comes back.
    ownOrigin &&= at.origin === origin;
    if (run.destinations.refuses(current)) return { kind: 'refused', finalUrl: current };
    const headers = requestHeaders(at, ownOrigin, run.options);
    let answer = await requestOnce(current, 'HEAD', headers, run);
    if (answer.kind === 'answered' && answer.status >= 400) answer = await requestOnce(current, 'GET', headers, run);
    if (answer.kind !== 'answered') return { ...answer, finalUrl: current };
    const { status, location } = answer;
    if (status >= 300 && status < 400 && location !== undefined) {
      try {
        current = new URL(location, current).href;
      } catch {
        return { kind: 'answered', status, finalUrl: current };
      }
      continue;
    }
    return { kind: 'answered', status, finalUrl: current };
  }
  return { kind: 'too-many-redirects', finalUrl: current };
}

type Answer = { readonly kind: 'answered'; readonly status: number; readonly location: string | undefined } | Failure;

async function requestOnce(url: string, method: 'HEAD' | 'GET', headers: Record<string, string>, run: LinkRun): Promise<Answer> {
  const timeout = AbortSignal.timeout(run.options.timeout ?? DEFAULT_LINK_TIMEOUT_MS);
  const signal = AbortSignal.any([...(run.outer ? [run.outer] : []), run.total, timeout]);
  try {
    const response = await run.request(url, { method, headers, signal, dispatcher: run.dispatcher });
    // Only the status matters: drop at most a little of the body, then the socket goes back to the pool.
    await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
    const location = response.headers.location;
    return { kind: 'answered', status: response.statusCode, location: Array.isArray(location) ? location[0] : location };
  } catch (error) {
    if (run.outer?.aborted) throw run.outer.reason;
    if (isDestinationRefused(error)) return { kind: 'refused' };
    // A socket error that came before a timer is what happened, even when
    // a late turn of the event loop saw the timer fire too.
    if (run.total.aborted && !isSocketError(error)) return { kind: 'not-checked' };
    if (timeout.aborted && !isSocketError(error)) return { kind: 'no-answer', reason: 'timeout' };
    return { kind: 'no-answer', reason: describeNetworkError(error) };
  }
}

function isSkipped(url: string, skip: LinkCheckOptions['skip']): boolean {
  return (skip ?? []).some((pattern) =>
    typeof pattern === 'string' ? url.toLowerCase().includes(pattern.toLowerCase()) : new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')).test(url),
  );
}

/** A network error's code (`ECONNREFUSED`), on the error or on its cause. */
function errorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True for a socket's own error; undici's abort errors carry codes too, and they mean the timer won. */
function isSocketError(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && !code.startsWith('UND_ERR_ABORT') && code !== 'ABORT_ERR';
}

/** `connection refused (ECONNREFUSED)`: what a person understands, with the code to search for. */
function describeNetworkError(error: unknown): string {
  const code = errorCode(error);
  const message = (error as { message?: string } | undefined)?.message;
  const words: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'no such host',
    EAI_AGAIN: 'the host name did not resolve',
    ECONNRESET: 'the connection was reset',
    UND_ERR_SOCKET: 'the connection closed before an answer',
    CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  };
  if (code && words[code]) return `${words[code]} (${code})`;
  return code ? `${message ?? 'failed'} (${code})` : (message ?? String(error));
}

/** `"Confirm my email"`, `"Confirm" (also in the text part)`, `in the text part`. */
function nameOf(texts: readonly string[]): string {
  const inHtml = texts.filter((t) => t !== TEXT_PART).map((t) => JSON.stringify(t));
  if (inHtml.length === 0) return 'in the text part';
  return `${inHtml.join(' and ')}${texts.includes(TEXT_PART) ? ' (also in the text part)' : ''}`;
}

/** Runs `work` over `items`, at most `limit` at once, answers in the items' order. */
async function inPool<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
