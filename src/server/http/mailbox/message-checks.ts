// `GET|POST /api/v1/message/{id}/checks?mailbox=A`: the mail checks
// (src/checks, the same engine as the client's `mail.check()`) over a stored
// message, for the web UI's Checks tab. The links check fetches every link
// from this server's host, so it runs only when asked (a POST,
// checks-request.ts), and reaches loopback and private hosts only when
// `--link-check-allow` lists them (`linkCheckAllow`).
import { Refusal } from '../../../contract/refusal.js';
import type { WireMessage } from '../../../contract/wire.js';
import { checkMail } from '../../../checks/run-checks.js';
import { checkReportToWire, type WireCheckReport } from '../../../checks/wire.js';
import type { ChecksAsked } from './checks-request.js';

export async function messageChecks(
  message: WireMessage,
  asked: ChecksAsked,
  linkCheckAllow: readonly string[],
  signal: AbortSignal,
): Promise<WireCheckReport> {
  const mail = { html: message.html ?? '', text: message.text ?? '', size: message.size, subject: message.subject };
  try {
    // No browser here: accessibility is the Playwright adapter's.
    const report = await checkMail(mail, {
      skip: asked.links ? ['accessibility'] : ['links', 'accessibility'],
      links: { allowPrivate: linkCheckAllow },
      signal,
    });
    return checkReportToWire(report);
  } catch (error) {
    // The caller hung up (or the server is closing) while the links were fetched: an answer no one reads, not a bug to log.
    if (signal.aborted) throw new Refusal(503, 'unavailable', 'The checks were stopped: the caller hung up or the server is closing');
    throw error;
  }
}
