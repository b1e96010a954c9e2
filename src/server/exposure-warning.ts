// Loopback is the default bind because the API hands out every mailbox to
// whoever asks. Binding elsewhere is sometimes what a CI network needs, so it
// is allowed, but without a token it is worth one loud line.
import { isIP } from 'node:net';

/** True when `host` can only be reached from this machine. */
export function isLoopbackHost(host: string): boolean {
  const lower = host.toLowerCase();
  if (lower === 'localhost' || lower.endsWith('.localhost')) return true;
  if (isIP(lower) === 4) return lower.startsWith('127.');
  if (isIP(lower) === 6) return lower === '::1' || /^(?:0{0,4}:){1,7}0{0,3}1$/.test(lower) || /^::ffff:127\./.test(lower);
  return false;
}

/** The warning to print when the listeners are reachable from elsewhere and no token guards the API, else undefined. */
export function exposureWarning(host: string, token: string | undefined): string | undefined {
  if (token !== undefined || isLoopbackHost(host)) return undefined;
  return (
    `mailroom: WARNING: listening on ${host}, which other machines may reach, without a token: ` +
    `anyone who can connect can read and delete every mailbox. ` +
    `Start with --token <secret> (MAILROOM_TOKEN) or bind to 127.0.0.1.`
  );
}
