// How the attempt log keeps one attempt: a short JSON array, positions in
// place of field names, without the recipient (the log is kept per address,
// which names it) or, when the reply code decides it, the outcome. Both logs use
// it, the memory one (attempt-log.ts) and Redis's (redis-lab.ts): as an
// object with its names an accepted mail's entry cost about 450 bytes in the
// memory log and 330 in Redis, most of it the names (bench/store-bytes.ts).
import { outcomeOfCode, type SmtpAttempt } from '../base/smtp-attempts.js';

/** The fields in the order an entry holds them; a trailing run of absent ones is left off. */
const FIELDS = [
  'at',
  'clientIp',
  'from',
  'stage',
  'code',
  'enhancedCode',
  'text',
  'messageId',
  'beganAt',
  'rule',
  'headerMessageId',
  'headerSubject',
  'outcome',
  // A provider API call's; an SMTP attempt's entry ends before them.
  'provider',
  'userAgent',
  'retryAfterMs',
] as const satisfies ReadonlyArray<Exclude<keyof SmtpAttempt, 'to'>>;

/** The outcome an attempt's reply code means (a dropped connection has none): what an entry leaves out. */
const outcomeOf = (code: number | undefined) => (code === undefined ? 'dropped' : outcomeOfCode(code));

/**
 * The entry for `attempt`. `quote` writes a string as JSON (the Redis log
 * passes one that keeps its id holes raw); absent fields are `null`.
 */
export function encodeAttemptEntry(attempt: SmtpAttempt, quote: (value: string) => string = JSON.stringify): string {
  const valueOf = (name: (typeof FIELDS)[number]) => (name === 'outcome' && attempt.outcome === outcomeOf(attempt.code) ? undefined : attempt[name]);
  let last = FIELDS.length - 1;
  while (last > 0 && valueOf(FIELDS[last]!) === undefined) last--;
  const values: string[] = [];
  for (let i = 0; i <= last; i++) {
    const value = valueOf(FIELDS[i]!);
    values.push(value === undefined ? 'null' : typeof value === 'string' ? quote(value) : String(value));
  }
  // Brackets added before the join: its result is one flat string, where a
  // template around it would keep the parts (a cons string) in the log.
  values[0] = `[${values[0]}`;
  values[last] += ']';
  return values.join(',');
}

/** The attempt an entry of `to`'s log holds. */
export function decodeAttemptEntry(entry: string, to: string): SmtpAttempt {
  const values = JSON.parse(entry) as unknown[];
  const field = <T>(name: (typeof FIELDS)[number]): T => (values[FIELDS.indexOf(name)] ?? undefined) as T;
  const code = field<number | undefined>('code');
  return {
    at: field('at'),
    clientIp: field('clientIp'),
    from: field('from'),
    to,
    stage: field('stage'),
    code,
    enhancedCode: field('enhancedCode'),
    text: field('text'),
    outcome: field('outcome') ?? outcomeOf(code),
    messageId: field('messageId'),
    beganAt: field('beganAt'),
    rule: field('rule'),
    headerMessageId: field('headerMessageId'),
    headerSubject: field('headerSubject'),
    provider: field('provider'),
    userAgent: field('userAgent'),
    retryAfterMs: field('retryAfterMs'),
  };
}
