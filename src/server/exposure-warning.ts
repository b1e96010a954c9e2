// Loopback is the default bind because the API hands out every mailbox to
// whoever asks. Binding elsewhere is sometimes what a CI network needs, so it
// is allowed, but without a token it is worth one loud line.
import { isLoopbackHost } from './base/loopback.js';

/** The warning to print when the listeners are reachable from elsewhere and no token guards the API, else undefined. */
export function exposureWarning(host: string, token: string | undefined): string | undefined {
  if (token !== undefined || isLoopbackHost(host)) return undefined;
  return (
    `mailroom: WARNING: listening on ${host}, which other machines may reach, without a token: ` +
    `anyone who can connect can read and delete every mailbox. ` +
    `Give it a token (MAILROOM_TOKEN, --token-file FILE; startServer's token) or bind to 127.0.0.1.`
  );
}
