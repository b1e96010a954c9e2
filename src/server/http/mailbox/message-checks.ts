// `GET /api/v1/message/{id}/checks?mailbox=A[&links=1]`: the mail checks
// (src/checks, the same engine as the client's `mail.check()`) over a stored
// message, for the web UI's Checks tab. The links check fetches every link
// from this server's host, so it runs only when asked (`links=1`). The
// message is handed, as received, to a check thread
// (../../mail-checks/check-threads.ts), which parses and checks it within a
// deadline: none of that work is done on the thread answering this request.
import { Refusal } from '../../../contract/refusal.js';
import type { WireCheckReport } from '../../../checks/wire.js';
import type { StoredMessage } from '../../base/stored-message.js';
import type { CheckThreads } from '../../mail-checks/check-threads.js';
import { singleParam } from '../edge/params.js';

export async function messageChecks(message: StoredMessage, params: URLSearchParams, threads: CheckThreads, signal: AbortSignal): Promise<WireCheckReport> {
  const links = singleParam(params, 'links');
  if (links !== undefined && links !== '0' && links !== '1') {
    throw new Refusal(400, 'invalid_request', `Expected parameter \`links\` to be 1 (fetch the links) or 0, got ${JSON.stringify(links)}`);
  }
  return threads.check({ source: await message.content.source(), size: message.size, links: links === '1' }, signal);
}
