// The certificate SMTP over TLS presents when none was given: self-signed,
// for the names a test reaches a local server by, made once per process.
import { isIP } from 'node:net';
import { makeSelfSigned, oncePerProcess } from '../base/self-signed.js';

/** A certificate (PEM, chain allowed) and its private key (PEM), as node:tls takes them. */
export interface TlsCertificate {
  readonly cert: string;
  readonly key: string;
}

/** The names the made-up certificate is valid for: a test reaches a local server by these. */
export const SELF_SIGNED_NAMES = Object.freeze(['localhost', '127.0.0.1', '::1']);

/**
 * A self-signed certificate for `SELF_SIGNED_NAMES`, made at the first call
 * and shared by every server of the process after it (base/self-signed.ts:
 * about a tenth of a second each, and a test run starts many servers). An
 * RSA key, which every TLS client takes, where an EC key would be faster but
 * refused by the oldest.
 */
export const selfSignedCertificate: () => Promise<TlsCertificate> = oncePerProcess(() =>
  makeSelfSigned('localhost', [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: SELF_SIGNED_NAMES.map((name) => (isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name })),
    },
  ]),
);
