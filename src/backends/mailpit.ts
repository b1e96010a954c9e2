// Mailpit 1.2x+ as a backend. Built from its API documentation and its
// source (github.com/axllent/mailpit; the paths below are in that repo):
//
// - `GET /api/v1/search?query=addressed:"A"&start=S&limit=N` lists mail
//   newest first (server/apiv1/messages.go `Search`, "sorted by received
//   date (descending)"). `addressed:` is a SQL `LIKE '%A%'` over To, From,
//   Cc, Bcc and ReplyTo (internal/storage/search.go, `searchQueryBuilder`):
//   a substring match that also finds mail *from* A, or to `xA`. So each
//   page is filtered here to mail whose To, Cc or Bcc holds A exactly,
//   lower-cased as the embedded server keys mailboxes. `limit` defaults to
//   50 (server/apiv1/api.go `getStartLimit`).
// - Envelope recipients missing from the headers are written into a Bcc
//   header at SMTP time (internal/smtpd/main.go, "add missing email
//   addresses to Bcc"), so a Bcc-only delivery is found through Bcc.
// - Ids are random (internal/storage/messages.go `Store`), so the watermark
//   is the set of ids present at setup. `Created` is the arrival time.
// - `GET /api/v1/message/{ID}` answers the message and marks it read, 404
//   ("404 page not found", text) when it is gone (server/apiv1/message.go
//   `GetMessage`, server/apiv1/api.go `fourOFour`); `/headers` and `/raw`
//   read the stored source, 404 likewise, and mark nothing.
// - `DELETE /api/v1/messages` with `{"IDs": [...]}` deletes those ids and
//   answers "ok" whether or not they existed; **with no IDs, or an empty
//   list, or a body that is not JSON, it deletes every message**
//   (server/apiv1/messages.go `DeleteMessages`). Every delete here goes
//   through `bulkDelete`, which refuses an empty list before any request.
//   A second delete of one mail is told apart by asking for its headers first.
// - `GET /api/events` is a WebSocket of `{"Type": "new", "Data": summary}`
//   frames among others (server/websockets/hub.go `Broadcast`,
//   internal/storage/messages.go `websockets.Broadcast("new", c)`): the push
//   stream. Mailpit pings; the WebSocket client answers by itself.
// - Basic auth (`--ui-auth-file`) guards the API and the event stream
//   (server/server.go `middleWareFunc`, server/websockets/client.go); `GET
//   /livez` answers 200 with no body (server/handlers/k8healthz.go).
import { z } from 'zod';
import type { CallOptions, ListOptions, MailboxListing } from '../client/client.js';
import { MailroomApiError } from '../client/errors.js';
import type { MailSummary, MessageDetail } from '../client/messages.js';
import { CatcherBackend, type CatcherOptions } from './catcher-backend.js';
import { parseAnswer } from './catcher-http.js';
import type { FeedProtocol } from './push-feed.js';
import { formatMailbox, isAddressedAlone, isRecipient, previewOf } from './recipients.js';

const Address = z.object({ Name: z.string().nullish(), Address: z.string().nullish() }).passthrough().nullish();
const Addresses = z
  .array(Address)
  .nullish()
  .transform((list) => (list ?? []).map((a) => a?.Address ?? '').filter(Boolean));

const Parts = z
  .array(
    z.object({ FileName: z.string().nullish(), ContentType: z.string().nullish(), ContentID: z.string().nullish(), Size: z.number().nullish() }).passthrough(),
  )
  .nullish();

/** The fields a search hit and a whole message share. */
const COMMON = {
  ID: z.string().min(1),
  MessageID: z.string().nullish(),
  From: Address,
  To: Addresses,
  Cc: Addresses,
  Bcc: Addresses,
  Subject: z.string().nullish(),
  Size: z.number().nullish(),
};

const Summary = z.object({ ...COMMON, Created: z.string(), Snippet: z.string().nullish() }).passthrough();
type Summary = z.infer<typeof Summary>;

const SearchAnswer = z.object({ messages: z.array(Summary).nullish(), messages_count: z.number().nullish() }).passthrough();

const Message = z
  .object({ ...COMMON, Date: z.string().nullish(), Text: z.string().nullish(), HTML: z.string().nullish(), Attachments: Parts, Inline: Parts })
  .passthrough();
type Message = z.infer<typeof Message>;

const Headers = z.record(z.string(), z.array(z.string()));

/** A page of the search; Mailpit's own bound is its `limit`, this keeps each answer small. */
const PAGE = 100;

/** `{"Type": "new"}` frames are new mail (server/websockets/hub.go); others are stats, deletions, errors. */
const eventsProtocol: FeedProtocol = {
  readyOnOpen: true,
  onFrame(frame) {
    try {
      const { Type } = JSON.parse(frame) as { Type?: unknown };
      return Type === 'new' ? 'mail' : undefined;
    } catch {
      return undefined;
    }
  },
};

export class MailpitBackend extends CatcherBackend {
  readonly backend = 'mailpit' as const;

  constructor(options: CatcherOptions) {
    super(options, { path: '/api/events', protocol: eventsProtocol });
  }

  async health(options: CallOptions = {}): Promise<boolean> {
    await this.http.text({ method: 'GET', path: '/livez', ...options });
    return true;
  }

  async listMessages(address: string, options: ListOptions = {}): Promise<MailboxListing> {
    const wanted = options.limit ?? Number.POSITIVE_INFINITY;
    const mine = await this.#addressed(address, options, wanted);
    return { address, messages: mine.slice(0, wanted).map(summaryOf) };
  }

  async presentIds(address: string, options: CallOptions = {}): Promise<readonly string[]> {
    return (await this.#addressed(address, options, Number.POSITIVE_INFINITY)).map((m) => m.ID);
  }

  async getMessage(address: string, id: string, options: CallOptions = {}): Promise<MessageDetail> {
    const path = `/api/v1/message/${encodeURIComponent(id)}`;
    const [body, headers] = await Promise.all([
      this.http.json({ method: 'GET', path, address, ...options }),
      this.http.json({ method: 'GET', path: `${path}/headers`, address, ...options }),
    ]);
    const message = parseAnswer(body, Message, this.apiURL + path, 'Mailpit');
    // The contract scopes an id to its mailbox: another address's mail is not found here.
    if (!isRecipient([...message.To, ...message.Cc, ...message.Bcc], address)) {
      throw new MailroomApiError({ method: 'GET', url: this.apiURL + path, status: 404, slug: 'not_found', address });
    }
    return detailOf(message, parseAnswer(headers, Headers, `${this.apiURL}${path}/headers`, 'Mailpit'));
  }

  getRawMessage(address: string, id: string, options: CallOptions = {}): Promise<string> {
    return this.http.text({ method: 'GET', path: `/api/v1/message/${encodeURIComponent(id)}/raw`, address, ...options });
  }

  async deleteMessage(address: string, id: string, options: CallOptions = {}): Promise<boolean> {
    // Mailpit answers "ok" to the delete of a missing id: ask first, so a second delete says "already gone".
    try {
      await this.http.text({ method: 'GET', path: `/api/v1/message/${encodeURIComponent(id)}/headers`, address, ...options });
    } catch (error) {
      if (error instanceof MailroomApiError && error.status === 404) return false;
      throw error;
    }
    await this.#bulkDelete([id], address, options);
    return true;
  }

  async deleteMailbox(address: string, options: CallOptions = {}): Promise<number> {
    const alone = (await this.#addressed(address, options, Number.POSITIVE_INFINITY)).filter((m) => isAddressedAlone([...m.To, ...m.Cc, ...m.Bcc], address));
    if (alone.length === 0) return 0;
    await this.#bulkDelete(
      alone.map((m) => m.ID),
      address,
      options,
    );
    return alone.length;
  }

  /**
   * `DELETE /api/v1/messages {"IDs": ids}`. An empty list would delete every
   * message in Mailpit (server/apiv1/messages.go `DeleteMessages`), so it
   * is refused here, before any request.
   */
  async #bulkDelete(ids: readonly string[], address: string, options: CallOptions): Promise<void> {
    await this.http.text({ method: 'DELETE', path: '/api/v1/messages', json: bulkDeleteBody(ids), address, ...options });
  }

  /** The address's mail, newest first, at least `wanted` of it when there is that much: the search's pages, filtered exactly. */
  async #addressed(address: string, options: CallOptions, wanted: number): Promise<Summary[]> {
    const path = '/api/v1/search';
    const query = `addressed:"${address}"`;
    const mine: Summary[] = [];
    for (let start = 0; ; start += PAGE) {
      const answer = parseAnswer(
        await this.http.json({ method: 'GET', path, query: { query, start: String(start), limit: String(PAGE) }, address, ...options }),
        SearchAnswer,
        this.apiURL + path,
        'Mailpit',
      );
      const page = answer.messages ?? [];
      for (const m of page) if (isRecipient([...m.To, ...m.Cc, ...m.Bcc], address)) mine.push(m);
      if (page.length < PAGE || mine.length >= wanted) return mine;
    }
  }
}

/**
 * The body of Mailpit's bulk delete, `{"IDs": [...]}`. Given no ids Mailpit
 * deletes every message (server/apiv1/messages.go `DeleteMessages`), so an
 * empty list, or an empty id in it, is refused here, before any request.
 */
export function bulkDeleteBody(ids: readonly string[]): { IDs: string[] } {
  if (ids.length === 0 || ids.some((id) => typeof id !== 'string' || id === '')) {
    throw new TypeError("Refusing to send Mailpit's bulk delete an empty id list: Mailpit deletes every message when given none");
  }
  return { IDs: [...ids] };
}

function summaryOf(m: Summary): MailSummary {
  return Object.freeze({
    id: m.ID,
    from: formatMailbox({ name: m.From?.Name, address: m.From?.Address }),
    to: Object.freeze([...m.To]),
    subject: m.Subject ?? '',
    preview: previewOf(m.Snippet ?? ''),
    receivedAt: new Date(m.Created),
    size: m.Size ?? 0,
  });
}

function detailOf(m: Message, headers: Readonly<Record<string, readonly string[]>>): MessageDetail {
  const lower: Record<string, readonly string[]> = {};
  for (const [name, values] of Object.entries(headers)) lower[name.toLowerCase()] = Object.freeze([...(lower[name.toLowerCase()] ?? []), ...values]);
  const date = m.Date ? new Date(m.Date) : null;
  return Object.freeze({
    id: m.ID,
    from: formatMailbox({ name: m.From?.Name, address: m.From?.Address }),
    to: Object.freeze([...m.To]),
    subject: m.Subject ?? '',
    preview: previewOf(m.Text ?? ''),
    // The full message carries no arrival time; its Date is the nearest.
    receivedAt: date ?? new Date(0),
    size: m.Size ?? 0,
    messageId: m.MessageID ? `<${m.MessageID.replace(/^<|>$/g, '')}>` : null,
    cc: Object.freeze([...m.Cc]),
    date,
    headers: Object.freeze(lower),
    text: m.Text ?? '',
    html: m.HTML ?? '',
    attachments: Object.freeze(
      [...(m.Attachments ?? []), ...(m.Inline ?? [])].map((a) =>
        Object.freeze({
          filename: a.FileName ?? null,
          contentType: a.ContentType ?? 'application/octet-stream',
          size: a.Size ?? 0,
          contentId: a.ContentID ?? null,
        }),
      ),
    ),
  });
}
