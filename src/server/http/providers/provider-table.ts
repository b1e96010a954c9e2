// Every provider operation this server answers, and which one a path is
// for. A provider is added by writing its dialect file beside this one and
// listing its operations here (and a row in the provider contract test).
import { BREVO_OPERATIONS } from './brevo.js';
import { MAILGUN_OPERATIONS } from './mailgun.js';
import { POSTMARK_OPERATIONS } from './postmark.js';
import type { ProviderOperation } from './provider-operation.js';
import { RESEND_OPERATIONS } from './resend.js';
import { SENDGRID_OPERATIONS } from './sendgrid.js';
import { SES_V1_OPERATIONS } from './ses-v1.js';
import { SES_V2_OPERATIONS } from './ses-v2.js';

export const PROVIDER_OPERATIONS: readonly ProviderOperation[] = Object.freeze([
  ...SES_V2_OPERATIONS,
  ...SES_V1_OPERATIONS,
  ...RESEND_OPERATIONS,
  ...SENDGRID_OPERATIONS,
  ...POSTMARK_OPERATIONS,
  ...MAILGUN_OPERATIONS,
  ...BREVO_OPERATIONS,
]);

/** The providers whose send calls are answered, as `/healthz` lists them (`features.providers`). */
export const PROVIDER_NAMES_SERVED: readonly string[] = Object.freeze([...new Set(PROVIDER_OPERATIONS.map((operation) => operation.provider))]);

/** The operation a POST to `path` is for, if any. */
export function providerOperationFor(path: string): ProviderOperation | undefined {
  return PROVIDER_OPERATIONS.find((operation) => operation.matches(path));
}
