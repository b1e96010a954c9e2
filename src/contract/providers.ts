// The provider APIs (docs/CONTRACT.md, "Provider APIs"): the names of the
// email providers whose send calls the embedded server takes, and the stamp
// it writes on every mail one of them took, so a test can read which
// provider took it, with the provider's id, tags and metadata. Both halves
// read this: the server writes the stamp, the client's `Mail` reads it.

export type ProviderName = 'ses' | 'sendgrid' | 'resend' | 'postmark' | 'mailgun' | 'brevo';
export const PROVIDER_NAMES: readonly ProviderName[] = Object.freeze(['ses', 'sendgrid', 'resend', 'postmark', 'mailgun', 'brevo']);

/**
 * The header the server puts first on a mail a provider API took. Its value
 * is the stamp as JSON, ASCII only; postal-mime and every reader unfold it.
 */
export const PROVIDER_HEADER = 'X-Mailroom-Provider';

/** Which provider took a mail, as the `Mail` (and the stamp) says it. */
export interface ProviderStamp {
  readonly name: ProviderName;
  /** The id the provider answered the send with (SES `MessageId`, Resend `id`, SendGrid `X-Message-Id`, ...). */
  readonly id: string;
  /** Tags without values: SendGrid categories, Postmark's `Tag`, Mailgun's `o:tag`, Brevo's `tags`. */
  readonly tags: readonly string[];
  /** Name/value pairs: SES `EmailTags`, Resend `tags`, SendGrid `custom_args`, Postmark `Metadata`, Mailgun `v:` variables. */
  readonly metadata: Readonly<Record<string, string>>;
}

/** The stamp as the header carries it: `{"provider":…,"id":…,"tags":[…],"metadata":{…}}`, non-ASCII escaped. */
export function stampHeaderValue(stamp: ProviderStamp): string {
  const json = JSON.stringify({ provider: stamp.name, id: stamp.id, tags: stamp.tags, metadata: stamp.metadata });
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The stamp a header value carries, or undefined when it is not one (a header some other sender wrote). */
export function readStampHeader(value: string | undefined): ProviderStamp | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object') return undefined;
  const { provider, id, tags, metadata } = parsed as Record<string, unknown>;
  if (!PROVIDER_NAMES.includes(provider as ProviderName) || typeof id !== 'string') return undefined;
  const tagList = Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string') : [];
  const pairs =
    metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata)
      ? Object.entries(metadata).filter((entry): entry is [string, string] => typeof entry[1] === 'string')
      : [];
  return Object.freeze({ name: provider as ProviderName, id, tags: Object.freeze(tagList), metadata: Object.freeze(Object.fromEntries(pairs)) });
}
