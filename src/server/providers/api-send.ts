// One mail as a provider's send call asks for it, whatever the provider: the
// dialects (../http/providers/) turn their request into these, and the
// intake (api-intake.ts) takes these, so composing MIME and storing happen
// once, after the dialects, never inside one.
//
// A call fails in one of the ways below; each dialect says each in its
// provider's own words and status (a Resend `validation_error`, an SES
// `MessageRejected`, a Postmark `ErrorCode`), so the provider's SDK raises
// the error it would raise in production.
import type { ProviderStamp } from '../../contract/providers.js';

/** `{ address: 'a@b.test', name: 'Ann' }`: an address as the call gave it, with its display name. */
export interface ApiAddress {
  readonly address: string;
  readonly name?: string | undefined;
}

export interface ApiAttachment {
  readonly filename: string | undefined;
  readonly content: Buffer;
  readonly contentType: string | undefined;
  /** Set for an inline part, referred to from the HTML as `cid:<contentId>`. */
  readonly contentId: string | undefined;
  readonly inline: boolean;
}

/** A mail the provider composes from fields (every JSON send, SES v1 `SendEmail`, Mailgun's form). */
export interface ComposedMail {
  readonly kind: 'composed';
  readonly from: ApiAddress;
  readonly to: readonly ApiAddress[];
  readonly cc: readonly ApiAddress[];
  /** Recipients in the envelope only, never in the headers. */
  readonly bcc: readonly ApiAddress[];
  readonly replyTo: readonly ApiAddress[];
  readonly subject: string;
  readonly text: string | undefined;
  readonly html: string | undefined;
  /** Custom headers, in the order given. */
  readonly headers: readonly (readonly [string, string])[];
  readonly attachments: readonly ApiAttachment[];
}

/**
 * A mail the app composed itself (SES `Raw`, SES v1 `SendRawEmail`,
 * Mailgun's `messages.mime`): its recipients are the call's destination
 * list, not its headers (nodemailer puts Bcc recipients only there).
 */
export interface RawMail {
  readonly kind: 'raw';
  readonly source: Buffer;
  /** The envelope sender, when the call names one (else read from the source's From). */
  readonly from: string | undefined;
  readonly recipients: readonly string[];
}

/** One mail a call asks for, with what the provider answers it by. */
export interface ApiSend {
  readonly mail: ComposedMail | RawMail;
  /** The id the provider answers with, in its own shape; the stamp carries it too. */
  readonly stamp: ProviderStamp;
}

/** How one send (or the whole call) failed, before the dialect words it. */
export type ApiFailure =
  /** The provider's auth header is missing or not shaped as the provider's. */
  | { readonly kind: 'auth'; readonly detail: string }
  /** The request or one of its fields is wrong: `field` names it in the provider's own spelling. */
  | { readonly kind: 'invalid'; readonly detail: string; readonly field?: string | undefined }
  | { readonly kind: 'too_many_recipients'; readonly detail: string }
  | { readonly kind: 'too_large'; readonly detail: string }
  /** Something stored at the provider that this server does not have (a template by id, a scheduled send); `field` names what asked for it. */
  | { readonly kind: 'unsupported'; readonly detail: string; readonly field?: string | undefined }
  /** A recipient on a domain this server does not take mail for (only with `catchAll: false`). */
  | { readonly kind: 'domain'; readonly detail: string }
  /** A test rule: try again later, after `retryAfterMs` when known. */
  | { readonly kind: 'rate_limited'; readonly detail: string; readonly retryAfterMs: number | undefined }
  /** A test rule, or a store that failed: the provider is down (500, 503). */
  | { readonly kind: 'unavailable'; readonly detail: string; readonly status: number }
  /** A test rule: the recipient is refused for good (bounced, suppressed, inactive). */
  | { readonly kind: 'rejected'; readonly detail: string; readonly recipient: string };

export class ApiFailureError extends Error {
  constructor(readonly failure: ApiFailure) {
    super(failure.detail);
  }
}

/** Throws the failure, for parsers deep in a request's fields. */
export function fail(failure: ApiFailure): never {
  throw new ApiFailureError(failure);
}

/** `Ann <a@b.test>` or `a@b.test`: how the mail's headers and the attempt log name an address. */
export function formatAddress(address: ApiAddress): string {
  return address.name ? `${JSON.stringify(address.name)} <${address.address}>` : address.address;
}
