// Self-signed certificates, made with `selfsigned` (loaded here only, so a
// server that needs none never loads it): an RSA 2048 key, which every
// client takes, valid from a day back (a client whose clock is a little
// behind, a container or a CI machine, must not find it "not yet valid")
// for two years. SMTP's TLS (smtp/tls-certificate.ts) and SES's SNS
// signature (webhooks/provider-events/ses.ts) each make one, once per
// process: making one costs about a tenth of a second.
import type { generate } from 'selfsigned';

/** The certificate extensions selfsigned takes (its option types are not exported). */
export type CertificateExtensions = NonNullable<NonNullable<Parameters<typeof generate>[1]>['extensions']>;

/** A certificate (PEM, chain allowed) and its private key (PEM), as node:tls and node:crypto take them. */
export interface PemCertificate {
  readonly cert: string;
  readonly key: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** A certificate for `commonName` with `extensions` (selfsigned's default ones when none are given). */
export async function makeSelfSigned(commonName: string, extensions?: CertificateExtensions): Promise<PemCertificate> {
  const { generate } = await import('selfsigned');
  const notBeforeDate = new Date(Date.now() - DAY_MS);
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 2 * 365 * DAY_MS),
    ...(extensions ? { extensions } : {}),
  });
  return Object.freeze({ cert: pems.cert, key: pems.private });
}

/**
 * `make` run once for the process, its promise shared by every caller; a
 * failure is not kept, so the next call tries again.
 */
export function oncePerProcess<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}
