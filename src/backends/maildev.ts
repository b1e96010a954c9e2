// maildev 3.x as a backend (a devDependency; the suite runs on it for real).
// Read from its source, node_modules/@maildev/api/dist/server.js (routes
// under /api) and @maildev/smtp/dist/server.js (what a stored mail holds):
//
// - `GET /api/email` answers every mail in arrival order (its store is an
//   insertion-ordered Map, @maildev/core/dist/storage/memory.js). Its
//   `?envelope.to.address=` filter compares exactly, case included, so the
//   address is matched here instead, on the SMTP envelope (`envelope.to`,
//   which holds a Bcc-only recipient too), lower-cased as the embedded
//   server keys mailboxes.
// - Ids are 8 random characters (`makeId`, @maildev/core/dist/utils/id.js)
//   and `time` is the sender's Date header (`parsed.date || new Date()`):
//   neither orders mail, so the watermark is the set of ids present at setup.
// - `GET /api/email/:id` answers 404 once the mail is gone (and marks it
//   read: harmless here); `DELETE /api/email/:id` answers 404 on the second
//   call, which is "already gone"; `POST /api/email/delete {ids}` deletes
//   several and says which were not found.
// - Its socket.io server (path /socket.io, socket.io 4, Engine.IO v4) emits
//   `newMail` with the summary of each new mail: the push stream. The
//   summary names no envelope, so it only wakes the wait, which lists.
// - Basic auth (`--web-user`/`--web-pass`) guards /api but not
//   /api/healthz; the socket.io path is outside its hook.
import { z } from 'zod';
import type { CallOptions, ListOptions, MailboxListing } from '../client/client.js';
import { MailroomApiError } from '../client/errors.js';
import type { MailSummary, MessageDetail } from '../client/messages.js';
import { CatcherBackend, type CatcherOptions } from './catcher-backend.js';
import { parseAnswer } from './catcher-http.js';
import { formatMailbox, isAddressedAlone, isRecipient, previewOf } from './recipients.js';
import { socketIoProtocol } from './socket-io.js';

const Address = z.object({ address: z.string().nullish(), name: z.string().nullish() }).passthrough();
const Addresses = z
  .array(Address)
  .nullish()
  .transform((list) => list ?? []);

const MaildevEmail = z
  .object({
    id: z.string().min(1),
    time: z.union([z.string(), z.number()]).nullish(),
    subject: z.string().nullish(),
    size: z.number().nullish(),
    from: Addresses,
    to: Addresses,
    cc: Addresses,
    envelope: z.object({ to: Addresses }).passthrough().nullish(),
    headers: z.record(z.string(), z.unknown()).nullish(),
    text: z.string().nullish(),
    html: z.string().nullish(),
    attachments: z
      .array(
        z
          .object({
            filename: z.string().nullish(),
            contentType: z.string().nullish(),
            size: z.number().nullish(),
            contentId: z.string().nullish(),
          })
          .passthrough(),
      )
      .nullish(),
  })
  .passthrough();
type MaildevEmail = z.infer<typeof MaildevEmail>;

const MaildevList = z.array(MaildevEmail);
const BulkDeleted = z.object({ deleted: z.array(z.string()), notFound: z.array(z.string()).nullish() }).passthrough();

export class MaildevBackend extends CatcherBackend {
  readonly backend = 'maildev' as const;

  constructor(options: CatcherOptions) {
    super(options, { path: '/socket.io/?EIO=4&transport=websocket', protocol: socketIoProtocol('newMail') });
  }

  async health(options: CallOptions = {}): Promise<boolean> {
    return (await this.http.text({ method: 'GET', path: '/api/healthz', ...options })).trim() === 'true';
  }

  async listMessages(address: string, options: ListOptions = {}): Promise<MailboxListing> {
    const mine = await this.#addressed(address, options);
    const newestFirst = mine.reverse().map(summaryOf);
    return { address, messages: options.limit === undefined ? newestFirst : newestFirst.slice(0, options.limit) };
  }

  async presentIds(address: string, options: CallOptions = {}): Promise<readonly string[]> {
    return (await this.#addressed(address, options)).reverse().map((email) => email.id);
  }

  async getMessage(address: string, id: string, options: CallOptions = {}): Promise<MessageDetail> {
    const path = `/api/email/${encodeURIComponent(id)}`;
    const email = parseAnswer(await this.http.json({ method: 'GET', path, address, ...options }), MaildevEmail, this.apiURL + path, 'maildev');
    // The contract scopes an id to its mailbox: another address's mail is not found here.
    if (!isRecipient(recipientsOf(email), address)) throw notFound(`${this.apiURL}${path}`, address);
    return detailOf(email);
  }

  getRawMessage(address: string, id: string, options: CallOptions = {}): Promise<string> {
    return this.http.text({ method: 'GET', path: `/api/email/${encodeURIComponent(id)}/source`, address, ...options });
  }

  async deleteMessage(address: string, id: string, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.http.text({ method: 'DELETE', path: `/api/email/${encodeURIComponent(id)}`, address, ...options });
      return true;
    } catch (error) {
      if (error instanceof MailroomApiError && error.status === 404) return false;
      throw error;
    }
  }

  async deleteMailbox(address: string, options: CallOptions = {}): Promise<number> {
    const ids = (await this.#addressed(address, options)).filter((email) => isAddressedAlone(recipientsOf(email), address)).map((email) => email.id);
    if (ids.length === 0) return 0;
    const path = '/api/email/delete';
    const answer = parseAnswer(await this.http.json({ method: 'POST', path, json: { ids }, address, ...options }), BulkDeleted, this.apiURL + path, 'maildev');
    return answer.deleted.length;
  }

  /** The address's mail, oldest first. */
  async #addressed(address: string, options: CallOptions): Promise<MaildevEmail[]> {
    const path = '/api/email';
    const all = parseAnswer(await this.http.json({ method: 'GET', path, address, ...options }), MaildevList, this.apiURL + path, 'maildev');
    return all.filter((email) => isRecipient(recipientsOf(email), address));
  }
}

/** Whom the mail was delivered to: its SMTP envelope; for mail maildev reloaded from disk (no envelope), its To and Cc. */
function recipientsOf(email: MaildevEmail): string[] {
  const envelope = (email.envelope?.to ?? []).map((a) => a.address ?? '').filter(Boolean);
  if (envelope.length > 0) return envelope;
  return [...email.to, ...email.cc].map((a) => a.address ?? '').filter(Boolean);
}

function summaryOf(email: MaildevEmail): MailSummary {
  const time = email.time === undefined || email.time === null ? Number.NaN : new Date(email.time).getTime();
  return Object.freeze({
    id: email.id,
    from: formatMailbox(email.from[0]),
    to: Object.freeze(email.to.map((a) => a.address ?? '').filter(Boolean)),
    subject: email.subject ?? '',
    preview: previewOf(email.text ?? ''),
    // maildev keeps no arrival time, only the sender's Date: shown, never used to order.
    receivedAt: new Date(Number.isNaN(time) ? 0 : time),
    size: email.size ?? 0,
  });
}

function detailOf(email: MaildevEmail): MessageDetail {
  const headers = headersOf(email.headers ?? {});
  const summary = summaryOf(email);
  return Object.freeze({
    ...summary,
    messageId: headers['message-id']?.[0] ?? null,
    cc: Object.freeze(email.cc.map((a) => a.address ?? '').filter(Boolean)),
    date: email.time ? new Date(email.time) : null,
    headers,
    text: email.text ?? '',
    html: email.html ?? '',
    attachments: Object.freeze(
      (email.attachments ?? []).map((a) =>
        Object.freeze({
          filename: a.filename ?? null,
          contentType: a.contentType ?? 'application/octet-stream',
          size: a.size ?? 0,
          contentId: a.contentId ?? null,
        }),
      ),
    ),
  });
}

/** mailparser's header map as JSON (strings, address objects, { value, params }), as name → strings. */
function headersOf(raw: Record<string, unknown>): Readonly<Record<string, readonly string[]>> {
  const out: Record<string, readonly string[]> = {};
  for (const [name, value] of Object.entries(raw)) {
    const values = Array.isArray(value) ? value : [value];
    out[name.toLowerCase()] = Object.freeze(values.map(headerText));
  }
  return Object.freeze(out);
}

function headerText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const o = value as { text?: unknown; value?: unknown };
    if (typeof o.text === 'string') return o.text;
    if (typeof o.value === 'string') return o.value;
  }
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

function notFound(url: string, address: string): MailroomApiError {
  return new MailroomApiError({ method: 'GET', url, status: 404, slug: 'not_found', address });
}
