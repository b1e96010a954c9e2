// The watermark (rule 1 of docs/CONTRACT.md, "The client's nine rules"): the
// newest message when the inbox is created, read before the test does
// whatever sends the mail. Every wait considers only mail above it.
import type { MailBackend } from '../backends/backend.js';
import type { MailSummary } from '../client/messages.js';
import { callPaced, listPaced, type PacedListOptions } from '../wait/paced-list.js';
import { unreachable } from './service-check.js';

export interface Watermark {
  /** The newest message's id. */
  readonly id: string;
  /** When the watermark message arrived: the fallback cut if it disappears. */
  readonly receivedAt: Date | undefined;
  /**
   * On a backend whose ids are random (maildev, Mailpit): every id present
   * at setup, remembered. Mail is above the watermark when its id is not
   * among them, wherever the listing puts it and whatever was deleted since.
   */
  readonly ids?: ReadonlySet<string> | undefined;
}

/**
 * Reads the watermark: the newest message now, or null for an empty
 * mailbox. A transient failure names the address and the service, and asks
 * whether the mail server is running there.
 */
export async function readWatermark(client: MailBackend, address: string, options: Omit<PacedListOptions, 'limit'>): Promise<Watermark | null> {
  if (client.idOrder === 'random' && client.presentIds) {
    let ids: readonly string[];
    try {
      ids = await callPaced(client, address, options, (timeout) => client.presentIds!(address, { timeout, signal: options.signal }));
    } catch (error) {
      throw unreachable(error, `Could not read the mail already at ${address} from ${client.backend} at ${client.apiURL}`, address);
    }
    return ids[0] === undefined ? null : { id: ids[0], receivedAt: undefined, ids: new Set(ids) };
  }
  let newest: readonly MailSummary[];
  try {
    newest = await listPaced(client, address, { ...options, limit: 1 });
  } catch (error) {
    throw unreachable(error, `Could not read the watermark of ${address} from ${client.apiURL}`, address);
  }
  const top = newest[0];
  return top ? { id: top.id, receivedAt: top.receivedAt } : null;
}

/**
 * The summaries above the watermark, newest first (rule 7). Walks down to
 * the watermark by id; when the watermark message is gone (expired,
 * deleted), stops at the first message that arrived no later than it did
 * instead: ids need not sort on every service, arrival times do.
 */
export function aboveWatermark(messages: readonly MailSummary[], mark: Watermark | null): MailSummary[] {
  if (mark?.ids) return messages.filter((m) => !mark.ids!.has(m.id));
  const markListed = mark !== null && messages.some((m) => m.id === mark.id);
  const cutAt = !markListed && mark?.receivedAt ? mark.receivedAt.getTime() : undefined;
  const fresh: MailSummary[] = [];
  for (const message of messages) {
    if (markListed && message.id === mark.id) break;
    if (cutAt !== undefined && message.receivedAt.getTime() <= cutAt) break;
    fresh.push(message);
  }
  return fresh;
}

/**
 * True when a listing reaches the watermark: it lists the watermark message
 * or, when that is gone, one that arrived no later than it did. Mail below
 * the listing's oldest entry is then all below the watermark too.
 */
export function reachesWatermark(messages: readonly MailSummary[], mark: Watermark | null): boolean {
  if (mark === null) return false;
  if (mark.ids) return messages.some((m) => mark.ids!.has(m.id));
  const cut = mark.receivedAt?.getTime();
  return messages.some((m) => m.id === mark.id || (cut !== undefined && m.receivedAt.getTime() <= cut));
}
