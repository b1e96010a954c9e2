// The providers' own SDKs, each pointed at a mailroom server the way its
// guide says (docs/providers.md), behind one small interface so a single
// contract test (test/server/providers.test.ts) runs every provider through
// what a user's app really calls. Each driver turns its SDK's way of
// failing (Resend returns `{ error }`, the others throw their own classes)
// into one `SdkOutcome` that names the SDK's error as the SDK does. Where an
// SDK raises one class for every refusal (SendGrid's `ResponseError`), the
// outcome also carries the status and the field the answer names.
//
// This file holds what every driver shares; each SDK's driver is a file of
// its own in test/support/providers/, so a test loads only the SDKs it uses
// (the AWS SDK alone costs a second of import).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProviderName } from '../../src/contract/providers.js';

export interface TestMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly cc?: readonly string[];
  readonly bcc?: readonly string[];
  readonly subject: string;
  readonly text?: string;
  readonly html?: string;
  readonly attachment?: { readonly filename: string; readonly content: Buffer; readonly contentType: string };
  readonly header?: readonly [string, string];
}

export type SdkOutcome =
  | { readonly ok: true; readonly id: string }
  /**
   * `error`: the SDK's own name for it (an exception class's name, Resend's `name`); `status` when the SDK says it;
   * `field`: the field the answer names, for an SDK whose one error class tells refusals apart by it (SendGrid's).
   */
  | { readonly ok: false; readonly error: string; readonly status: number | undefined; readonly message: string; readonly field?: string | null };

export interface SendAs {
  /** The API key (or credentials) to send with; undefined: a good one; null: none at all. */
  readonly key?: string | null;
  /** The SDK's own retries, where it has them: off unless asked, so a refusal reaches the test at once. */
  readonly sdkRetries?: boolean;
}

export interface ProviderDriver {
  readonly provider: ProviderName;
  /** `resend 6.38.0`: which SDK, at which version, as the test names it. */
  readonly sdk: string;
  send(baseURL: string, mail: TestMail, as?: SendAs): Promise<SdkOutcome>;
}

/** The installed version of a package, read from its package.json (not all export it). */
export const version = (name: string): string =>
  (JSON.parse(readFileSync(join(fileURLToPath(new URL('../../node_modules/', import.meta.url)), name, 'package.json'), 'utf8')) as { version: string }).version;

export function thrown(error: unknown): SdkOutcome {
  const e = error as {
    name?: string;
    constructor?: { name?: string };
    message?: string;
    $metadata?: { httpStatusCode?: number };
    code?: number;
    statusCode?: number;
    status?: number;
  };
  return {
    ok: false,
    error: e.name ?? e.constructor?.name ?? 'Error',
    status: e.$metadata?.httpStatusCode ?? e.statusCode ?? e.status ?? e.code,
    message: e.message ?? String(error),
  };
}

/** The SDKs' error from an answer the SDK never saw: a raw call with no credentials, named by what the answer says. */
export async function unauthenticated(url: string, read: (answer: Response, body: string) => string): Promise<SdkOutcome> {
  const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' });
  const body = await answer.text();
  return { ok: false, error: read(answer, body), status: answer.status, message: body };
}
