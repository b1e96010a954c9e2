// `GET /api/v1/message/{id}/checks?mailbox=A[&links=1]`: the mail checks
// (src/checks, the same engine as the client's `mail.check()`) over a stored
// message, for the web UI's Checks tab. The links check fetches every link
// from this server's host, so it runs only when asked (`links=1`).
import { Refusal } from '../../../contract/refusal.js';
import type { WireMessage } from '../../../contract/wire.js';
import { checkMail } from '../../../checks/run-checks.js';
import { checkReportToWire, type WireCheckReport } from '../../../checks/wire.js';
import { singleParam } from '../edge/params.js';

export async function messageChecks(message: WireMessage, params: URLSearchParams, signal: AbortSignal): Promise<WireCheckReport> {
  const links = singleParam(params, 'links');
  if (links !== undefined && links !== '0' && links !== '1') {
    throw new Refusal(400, 'invalid_request', `Expected parameter \`links\` to be 1 (fetch the links) or 0, got ${JSON.stringify(links)}`);
  }
  const mail = { html: message.html ?? '', text: message.text ?? '', size: message.size, subject: message.subject };
  try {
    // No browser here: accessibility is the Playwright adapter's.
    const report = await checkMail(mail, { skip: links === '1' ? ['accessibility'] : ['links', 'accessibility'], signal });
    return checkReportToWire(report);
  } catch (error) {
    // The caller hung up (or the server is closing) while the links were fetched: an answer no one reads, not a bug to log.
    if (signal.aborted) throw new Refusal(503, 'unavailable', 'The checks were stopped: the caller hung up or the server is closing');
    throw error;
  }
}
