// A URL as an error or a log line may show it: without the password it may
// carry (`redis://:password@host`, `http://user:password@host`). Errors end
// up in CI logs, terminals and bug reports; the password is never what a
// reader needs to see what went wrong. A value that is not a URL at all is
// often a URL with one mistake in it (a slash too few, a password with a `/`
// in it), so there the part before its last `@` goes, when a `:` stands in
// it: an email address (no `:`) stays as it is.

const MASK = '***';

/** `text` with the credentials of the URL in it masked: the password (or a lone user name, which may be a token) as `***`. */
export function withoutCredentials(text: string): string {
  const at = text.lastIndexOf('@');
  if (at === -1) return text;
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url) {
    if (url.username === '' && url.password === '') return text;
    if (url.password === '') url.username = MASK;
    else url.password = MASK;
    return url.href;
  }
  const before = text.slice(0, at);
  if (!before.includes(':')) return text;
  const authority = before.lastIndexOf('//');
  const start = authority === -1 ? 0 : authority + 2;
  return `${text.slice(0, start)}${MASK}${text.slice(at)}`;
}
