// The API token check. Both sides are hashed before the comparison so it takes
// the same time whatever the caller sent: `timingSafeEqual` alone needs equal
// lengths, and returning early on a length mismatch would tell a caller how
// long the token is.
import { createHash, timingSafeEqual } from 'node:crypto';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A check of `Authorization` headers against `token`, in time independent of what was sent. */
export function bearerTokenCheck(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    // A missing or malformed header is still compared, against nothing useful,
    // so the refusal costs the same as a wrong token.
    const given = digest(match ? match[1]! : '');
    return timingSafeEqual(given, expected) && match !== null;
  };
}
