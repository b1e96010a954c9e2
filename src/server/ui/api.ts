// The web UI's calls: the same HTTP API as any client (docs/CONTRACT.md),
// plus the UI's two extensions (the mailbox index and the event stream).
//
// The token: a server started with `--token` answers every call 401 without
// it. The person types it once; it is kept in sessionStorage (this tab only,
// gone when the tab closes) and sent as `Authorization: Bearer`, never in a
// URL. The event stream is read with fetch() for the same reason: an
// EventSource cannot send that header.
import type { WireCheckReport } from '../../checks/wire.js';
import type { WireWebhook, WireWebhookDeliveries, WireWebhookDelivery } from '../../contract/webhook-wire.js';
import type { WireHealth, WireListing, WireMailboxes, WireMailEvent, WireMessage, WireSmtpAttempts, WireSummary } from '../../contract/wire.js';

const TOKEN_KEY = 'mailroom.token';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly slug: string,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export function storedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function storeToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(): Record<string, string> {
  const token = storedToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(path, { ...init, headers: { ...headers(), ...(init.headers as Record<string, string> | undefined) }, cache: 'no-store' });
  if (response.ok) return response;
  let slug = 'http_error';
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: string; message?: string };
    slug = body.error ?? slug;
    message = body.message ?? message;
  } catch {
    // Not JSON: the status says enough.
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  throw new ApiError(response.status, slug, message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined);
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await call(path, init)).json()) as T;
}

const q = (params: Record<string, string | number>): string => new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString();

export const api = {
  health: () => json<WireHealth>('/healthz'),
  mailboxes: (contains: string) => json<WireMailboxes>(`/api/v1/mailboxes?${q({ limit: 100, ...(contains ? { contains } : {}) })}`),
  listing: (address: string) => json<WireListing>(`/api/v1/mailbox?${q({ address, limit: 100 })}`),
  message: (address: string, id: string) => json<WireMessage>(`/api/v1/message/${encodeURIComponent(id)}?${q({ mailbox: address })}`),
  raw: async (address: string, id: string) => (await call(`/api/v1/message/${encodeURIComponent(id)}/raw?${q({ mailbox: address })}`)).arrayBuffer(),
  /** The mail checks; `links` makes the server fetch every link, an action, so it is a POST of JSON (docs/CONTRACT.md). */
  checks: (address: string, id: string, links: boolean) =>
    json<WireCheckReport>(
      `/api/v1/message/${encodeURIComponent(id)}/checks?${q({ mailbox: address })}`,
      links ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ links: true }) } : undefined,
    ),
  deleteMessage: (address: string, id: string) =>
    json<{ deleted: boolean }>(`/api/v1/message/${encodeURIComponent(id)}?${q({ mailbox: address })}`, { method: 'DELETE' }),
  deleteMailbox: (address: string) => json<{ deleted: number }>(`/api/v1/mailbox?${q({ address })}`, { method: 'DELETE' }),
  attempts: (path: string, address: string) => json<WireSmtpAttempts>(`${path}?${q({ address })}`),
  /** Every webhook that hears `address` (scoped to it, or to every address), each with what it was sent for that address. */
  webhookDeliveries: async (path: string, address: string): Promise<{ webhook: WireWebhook; deliveries: readonly WireWebhookDelivery[] }[]> => {
    const { webhooks } = await json<{ webhooks: WireWebhook[] }>(path);
    const hearing = webhooks.filter((webhook) => webhook.address === null || webhook.address === address.toLowerCase());
    return Promise.all(
      hearing.map(async (webhook) => ({
        webhook,
        deliveries: (await json<WireWebhookDeliveries>(`${path}/${encodeURIComponent(webhook.id)}/deliveries?${q({ address })}`)).deliveries,
      })),
    );
  },
};

/** The summary fields of a full message, for adding an arrival to the list without a list call. */
export function summaryOf(message: WireMessage): WireSummary {
  const { id, from, to, subject, preview, received_at, size } = message;
  return { id, from, to, subject, preview, received_at, size };
}

/**
 * Reads the server's event stream until `signal` aborts, calling `onEvent`
 * for each event and `onOpen` once connected. Reconnects after a drop,
 * 2 s later; a 401 is handed to `onError` and ends it.
 */
export async function followEvents(
  path: string,
  handlers: { onEvent(event: WireMailEvent): void; onOpen(): void; onError(error: unknown): void },
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const response = await call(path, { signal, headers: { accept: 'text/event-stream' } });
      handlers.onOpen();
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          if (data) handlers.onEvent(JSON.parse(data) as WireMailEvent);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status === 401) {
        handlers.onError(error);
        return;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
  }
}
