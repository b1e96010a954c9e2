// `GET|POST /api/v1/message/{id}/checks?mailbox=A`: the mail checks
// (src/checks, the same engine as the client's `mail.check()`) over a stored
// message, for the web UI's Checks tab. The links check fetches every link
// from this server's host, so it runs only when asked (a POST,
// checks-request.ts), and reaches loopback and private hosts only when
// `--link-check-allow` lists them (`linkCheckAllow`). The message is handed,
// as received, to a check thread (../../mail-checks/check-threads.ts), which
// parses and checks it within a deadline: none of that work is done on the
// thread answering this request.
import type { WireCheckReport } from '../../../checks/wire.js';
import type { StoredMessage } from '../../base/stored-message.js';
import type { CheckThreads } from '../../mail-checks/check-threads.js';
import type { ChecksAsked } from './checks-request.js';

export async function messageChecks(
  message: StoredMessage,
  asked: ChecksAsked,
  linkCheckAllow: readonly string[],
  threads: CheckThreads,
  signal: AbortSignal,
): Promise<WireCheckReport> {
  return threads.check({ source: await message.content.source(), size: message.size, links: asked.links, allowPrivate: linkCheckAllow }, signal);
}
