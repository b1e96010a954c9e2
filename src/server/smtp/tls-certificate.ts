// The certificate SMTP over TLS presents when none was given: self-signed,
// for the names a test reaches a local server by, made once per process.
import { isIP } from 'node:net';

/** A certificate (PEM, chain allowed) and its private key (PEM), as node:tls takes them. */
export interface TlsCertificate {
  readonly cert: string;
  readonly key: string;
}

/** The names the made-up certificate is valid for: a test reaches a local server by these. */
export const SELF_SIGNED_NAMES = Object.freeze(['localhost', '127.0.0.1', '::1']);

const DAY_MS = 24 * 60 * 60 * 1000;

let made: Promise<TlsCertificate> | undefined;

/**
 * A self-signed certificate for `SELF_SIGNED_NAMES`, made at the first call
 * and shared by every server of the process after it: making one costs about
 * a tenth of a second (an RSA 2048 key, which every TLS client takes, where
 * an EC key would be faster but refused by the oldest), and a test run starts
 * many servers. `selfsigned` is loaded here only, so a server without TLS
 * never loads it.
 */
export function selfSignedCertificate(): Promise<TlsCertificate> {
  made ??= makeCertificate().catch((error: unknown) => {
    made = undefined;
    throw error;
  });
  return made;
}

async function makeCertificate(): Promise<TlsCertificate> {
  const { generate } = await import('selfsigned');
  // Valid from a day back: a client whose clock is a little behind (a
  // container, a CI machine) must not find it "not yet valid".
  const notBeforeDate = new Date(Date.now() - DAY_MS);
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 2 * 365 * DAY_MS),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: SELF_SIGNED_NAMES.map((name) => (isIP(name) ? { type: 7 as const, ip: name } : { type: 2 as const, value: name })),
      },
    ],
  });
  return Object.freeze({ cert: pems.cert, key: pems.private });
}
