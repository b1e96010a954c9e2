// What a provider's send call is to this server: one `ProviderOperation`
// per path a provider's SDK posts to. A dialect (one file per provider, in
// this folder) says how its SDK authenticates, how its request reads as
// sends (../../providers/api-send.ts), and how its answers and errors look;
// everything else - reading the body, the intake, the attempt log, holding
// or dropping the answer - is answer-provider.ts's, once for all of them.
import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderName } from '../../../contract/providers.js';
import type { ApiFailure, ApiSend } from '../../providers/api-send.js';
import type { SendOutcome } from '../../providers/api-intake.js';
import type { Reply } from '../edge/reply.js';
import type { BodyKind, ProviderBody } from './request-body.js';

export interface ProviderRequest {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: ProviderBody;
}

/**
 * How a call with several mails (a batch, SendGrid's personalizations) goes
 * when one of them fails: `all` - the call is refused and nothing is stored
 * (SendGrid, Resend's strict batches); `each` - every mail is answered on its
 * own (Postmark's batch, Resend's permissive one). A rate limit, an outage
 * or a dropped connection is the whole call's in both, as at the providers.
 */
export type BatchRule = 'all' | 'each';

/** A call read: its mails in order, each one a send or the reason it cannot be one. */
export interface ParsedCall {
  readonly sends: readonly (ApiSend | ApiFailure)[];
  readonly batch: BatchRule;
}

/** One mail's result, in the call's order, for the answer. */
export interface SendResult {
  /** Undefined for a mail of the call that could not be read (its failure is the outcome). */
  readonly send: ApiSend | undefined;
  readonly outcome: SendOutcome;
}

export interface ProviderOperation {
  readonly provider: ProviderName;
  /** `POST /emails`, as logs and the 404's list name it. */
  readonly name: string;
  /** Whether the operation answers this path (a POST's). */
  matches(path: string): boolean;
  readonly body: BodyKind;
  /** Why the auth header is missing or not the provider's shape; undefined when it is. Any key is taken. */
  authProblem(headers: IncomingHttpHeaders): string | undefined;
  /** The call's sends; throws (or rejects with) ApiFailureError for a call that cannot be read at all. */
  parse(request: ProviderRequest): ParsedCall | Promise<ParsedCall>;
  /** The answer to a call whose mails were taken (some may have failed, under `batch: 'each'`). */
  answer(results: readonly SendResult[], request: ProviderRequest): Reply;
  /** The answer to a call refused whole, in the provider's shape and status. */
  refuse(failure: ApiFailure): Reply;
}

/** The text an attempt records for a reply: what the provider's answer says. */
export function attemptText(outcome: SendOutcome, id: string | undefined): string {
  if (outcome.kind === 'accepted') return id ? `Accepted as ${id}` : 'Accepted';
  if (outcome.kind === 'dropped') return outcome.text;
  if (outcome.kind === 'ready' || outcome.kind === 'composed') return 'Not answered';
  return outcome.failure.detail;
}

/** A JSON call's body (undefined for another kind): what a JSON dialect reads its fields from. */
export function jsonBody(request: ProviderRequest): unknown {
  return request.body.kind === 'json' ? request.body.value : undefined;
}

/** The first header value, when a header came more than once. */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `Retry-After` in whole seconds (rounded up, at least 1 when there is a wait at all). */
export function retryAfterSeconds(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : String(ms <= 0 ? 0 : Math.max(1, Math.ceil(ms / 1000)));
}
