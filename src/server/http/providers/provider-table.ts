// Every provider operation this server answers, and which one a path is
// for. A provider is added by writing its dialect file beside this one and
// listing its operations here (and a row in the provider contract test).
import { BREVO_OPERATIONS } from './brevo.js';
import { MAILGUN_OPERATIONS } from './mailgun.js';
import type { ProviderOperation } from './provider-operation.js';
import { RESEND_OPERATIONS } from './resend.js';
import { SES_V1_OPERATIONS } from './ses-v1.js';
import { SES_V2_OPERATIONS } from './ses-v2.js';

export const PROVIDER_OPERATIONS: readonly ProviderOperation[] = Object.freeze([
  ...SES_V2_OPERATIONS,
  ...SES_V1_OPERATIONS,
  ...RESEND_OPERATIONS,
  ...MAILGUN_OPERATIONS,
  ...BREVO_OPERATIONS,
]);

/** The operation a POST to `path` is for, if any. */
export function providerOperationFor(path: string): ProviderOperation | undefined {
  return PROVIDER_OPERATIONS.find((operation) => operation.matches(path));
}
