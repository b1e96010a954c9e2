// One message: its HTML (sandboxed), text, headers, raw source, attachments,
// and, on a server with the SMTP deferral lab, the address's SMTP attempt
// timeline; on a server with webhooks, what they were sent for the address;
// and the mail checks (the same report as `mail.check()`).
// Each tab fetches what it shows when it is opened.
import PostalMime from 'postal-mime';
import { useEffect, useState } from 'preact/hooks';
import type { WireCheckReport } from '../../checks/wire.js';
import type { WireWebhookAttempt } from '../../contract/webhook-wire.js';
import type { WireHealth, WireMessage, WireSmtpAttempt } from '../../contract/wire.js';
import { api } from './api.js';
import { formatSize } from './format.js';
import { When } from './when.js';
import { MailFrame } from './mail-frame.js';

type TabId = 'html' | 'text' | 'headers' | 'raw' | 'attachments' | 'checks' | 'attempts' | 'webhooks';

interface Tab {
  readonly id: TabId;
  readonly label: string;
}

/**
 * The tabs this message has. Per-address extensions add theirs when the
 * server advertises them in /healthz: the SMTP attempts (`features.smtp_attempts`)
 * and the webhook deliveries (`features.webhooks`).
 */
function tabsFor(message: WireMessage, features: WireHealth['features']): Tab[] {
  const tabs: Tab[] = [];
  if (message.html) tabs.push({ id: 'html', label: 'HTML' });
  tabs.push({ id: 'text', label: 'Text' }, { id: 'headers', label: 'Headers' }, { id: 'raw', label: 'Raw' });
  tabs.push({ id: 'attachments', label: `Attachments (${message.attachments.length})` });
  tabs.push({ id: 'checks', label: 'Checks' });
  if (features.smtp_attempts) tabs.push({ id: 'attempts', label: 'SMTP attempts' });
  if (features.webhooks) tabs.push({ id: 'webhooks', label: 'Webhook deliveries' });
  return tabs;
}

export function MessageView(props: { address: string; message: WireMessage; features: WireHealth['features']; onDelete: () => void; onBack: () => void }) {
  const { address, message, features } = props;
  const tabs = tabsFor(message, features);
  const [tab, setTab] = useState<TabId>(tabs[0]!.id);
  useEffect(() => setTab(tabs[0]!.id), [message.id]);
  const current = tabs.some((t) => t.id === tab) ? tab : tabs[0]!.id;

  return (
    <article class="pane message" aria-label={`Message “${message.subject}”`}>
      <div class="pane-head">
        <button type="button" class="back" onClick={props.onBack}>
          ← Messages
        </button>
        <button type="button" class="danger" onClick={props.onDelete}>
          Delete
        </button>
      </div>
      <header class="message-head">
        <h2>{message.subject || '(no subject)'}</h2>
        <dl>
          <dt>From</dt>
          <dd>{message.from}</dd>
          <dt>To</dt>
          <dd>{message.to.join(', ')}</dd>
          {message.cc.length > 0 && (
            <>
              <dt>Cc</dt>
              <dd>{message.cc.join(', ')}</dd>
            </>
          )}
          <dt>Received</dt>
          <dd>
            <When iso={message.received_at} full /> · {formatSize(message.size)}
          </dd>
        </dl>
      </header>
      <div role="tablist" aria-label="Views of this message">
        {tabs.map((t) => (
          <button key={t.id} type="button" role="tab" id={`tab-${t.id}`} aria-selected={t.id === current} aria-controls="tabpanel" onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="tabpanel" aria-labelledby={`tab-${current}`} class="tabpanel">
        {current === 'html' && <MailFrame html={message.html ?? ''} subject={message.subject} address={address} id={message.id} />}
        {current === 'text' && <pre class="text">{message.text || '(this message has no text part)'}</pre>}
        {current === 'headers' && <Headers headers={message.headers} />}
        {current === 'raw' && <Raw address={address} id={message.id} />}
        {current === 'attachments' && <Attachments address={address} message={message} />}
        {current === 'checks' && <Checks address={address} id={message.id} />}
        {current === 'attempts' && features.smtp_attempts && <Attempts path={features.smtp_attempts} address={address} />}
        {current === 'webhooks' && features.webhooks && <Deliveries path={features.webhooks} address={address} />}
      </div>
    </article>
  );
}

function Headers({ headers }: { headers: WireMessage['headers'] }) {
  return (
    <table class="headers">
      <tbody>
        {Object.entries(headers).flatMap(([name, values]) =>
          values.map((value, i) => (
            <tr key={`${name}-${i}`}>
              <th scope="row">{name}</th>
              <td>{value}</td>
            </tr>
          )),
        )}
      </tbody>
    </table>
  );
}

/** Loads something when shown; says so while loading and when it failed. */
function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[]): { value?: T; error?: string } {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  useEffect(() => {
    let live = true;
    setState({});
    load().then(
      (value) => live && setState({ value }),
      (error: unknown) => live && setState({ error: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      live = false;
    };
  }, deps);
  return state;
}

function Raw({ address, id }: { address: string; id: string }) {
  const { value, error } = useLoad(async () => new TextDecoder().decode(await api.raw(address, id)), [address, id]);
  if (error) return <p role="alert">{error}</p>;
  if (value === undefined) return <p class="loading">Loading the source…</p>;
  return (
    <pre class="raw" aria-label="Raw source">
      {value}
    </pre>
  );
}

function Attachments({ address, message }: { address: string; message: WireMessage }) {
  const [error, setError] = useState<string>();
  if (message.attachments.length === 0) return <p class="empty">No attachments.</p>;
  // The API lists attachments but does not serve their bytes: they are read
  // out of the raw source, here in the browser, with the parser the server uses.
  const download = async (index: number) => {
    try {
      const parsed = await PostalMime.parse(await api.raw(address, message.id), { attachmentEncoding: 'arraybuffer' });
      const attachment = parsed.attachments[index];
      if (!attachment) throw new Error('This attachment is not in the source');
      const blob = new Blob([attachment.content as ArrayBuffer], { type: 'application/octet-stream' });
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = attachment.filename ?? `attachment-${index + 1}`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <>
      {error && <p role="alert">{error}</p>}
      <ul class="attachments">
        {message.attachments.map((a, i) => (
          <li key={i}>
            <span class="filename">{a.filename ?? `attachment ${i + 1}`}</span> <span class="type">{a.content_type}</span>{' '}
            <span class="size">{formatSize(a.size)}</span>{' '}
            <button type="button" onClick={() => void download(i)}>
              Download
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

/**
 * The mail checks as `mail.check()` reports them (no accessibility: that
 * needs the Playwright adapter's browser), with the html check's support
 * score of each client on one line. The links are fetched only when the
 * person asks, since that sends a request to every one of them.
 */
function Checks({ address, id }: { address: string; id: string }) {
  const [links, setLinks] = useState(false);
  useEffect(() => setLinks(false), [address, id]);
  const { value, error } = useLoad<WireCheckReport>(() => api.checks(address, id, links), [address, id, links]);
  return (
    <section class="checks" aria-label="Mail checks">
      <p class="checks-head">
        {value ? (
          <>
            <strong class={value.ok ? 'ok' : 'failed'}>{value.ok ? 'Passes' : 'Fails'}</strong> the checks: {value.checked.join(', ')}.{' '}
          </>
        ) : null}
        {links ? (
          value ? null : (
            <span class="loading">Fetching every link…</span>
          )
        ) : (
          <button type="button" onClick={() => setLinks(true)}>
            Check links too
          </button>
        )}
      </p>
      {error && <p role="alert">{error}</p>}
      {value?.support && value.support.length > 0 && (
        <p class="support">
          Client support:{' '}
          {value.support.map((s, i) => (
            <span key={s.client} title={s.worst ? `Costs the most: ${s.worst}` : 'Shows the whole mail as written'}>
              {i > 0 ? ' · ' : ''}
              {s.client} <strong class={s.score >= 95 ? 'ok' : s.score >= 80 ? 'fair' : 'failed'}>{s.score}%</strong>
            </span>
          ))}
        </p>
      )}
      {!value && !error && !links && <p class="loading">Checking…</p>}
      {value && value.problems.length === 0 && <p class="empty">No problems found.</p>}
      {value && value.problems.length > 0 && (
        <ol class="problems">
          {value.problems.map((p, i) => (
            <li key={i} class={p.severity}>
              <span class="badge">
                {p.check} {p.severity}
              </span>{' '}
              {p.message}
              <div class="fix">Fix: {p.fix}</div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function Attempts({ path, address }: { path: string; address: string }) {
  const { value, error } = useLoad(() => api.attempts(path, address), [path, address]);
  if (error) return <p role="alert">{error}</p>;
  if (!value) return <p class="loading">Loading the SMTP attempts…</p>;
  if (value.attempts.length === 0) return <p class="empty">No SMTP attempts logged for {address}.</p>;
  return (
    <table class="attempts" aria-label={`SMTP attempts to ${address}`}>
      <thead>
        <tr>
          <th scope="col">At</th>
          <th scope="col">Stage</th>
          <th scope="col">Reply</th>
          <th scope="col">Outcome</th>
          <th scope="col">Rule</th>
          <th scope="col">Subject</th>
        </tr>
      </thead>
      <tbody>
        {value.attempts.map((a: WireSmtpAttempt, i) => (
          <tr key={i} class={a.outcome}>
            <td>
              <When iso={a.at} />
            </td>
            <td>{a.stage}</td>
            <td>{a.code === null ? '(no reply)' : `${a.code} ${a.enhanced_code ?? ''} ${a.text}`}</td>
            <td>{a.outcome}</td>
            <td>{a.rule ?? ''}</td>
            <td>{a.subject ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `1 503 retrying, next in 212 ms`: one attempt, as the delivery log has it. */
function attemptText(a: WireWebhookAttempt): string {
  const copy = a.copy > 1 ? ` (copy ${a.copy})` : '';
  const next = a.next_delay_ms === null ? '' : `, next in ${a.next_delay_ms} ms`;
  return `#${a.attempt}${copy} ${a.status ?? a.reason} ${a.outcome} after ${Math.round(a.latency_ms)} ms${next}`;
}

/** The webhooks that hear the address, each with the events it was sent for it, oldest first, and every attempt. */
function Deliveries({ path, address }: { path: string; address: string }) {
  const { value, error } = useLoad(() => api.webhookDeliveries(path, address), [path, address]);
  if (error) return <p role="alert">{error}</p>;
  if (!value) return <p class="loading">Loading the webhook deliveries…</p>;
  if (value.length === 0) return <p class="empty">No webhook hears {address}.</p>;
  return (
    <>
      {value.map(({ webhook, deliveries }) => (
        <section key={webhook.id} class="webhook">
          <h3>
            {webhook.url} <span class="id">{webhook.id}</span>
          </h3>
          {deliveries.length === 0 ? (
            <p class="empty">Nothing sent to it for {address} yet.</p>
          ) : (
            <table class="deliveries" aria-label={`Webhook deliveries to ${webhook.url}`}>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Type</th>
                  <th scope="col">State</th>
                  <th scope="col">Attempts</th>
                </tr>
              </thead>
              <tbody>
                {deliveries.map((d) => (
                  <tr key={d.event_id} class={d.state}>
                    <td>
                      <When iso={d.created_at} /> <span class="id">{d.event_id}</span>
                    </td>
                    <td>{d.event_type}</td>
                    <td>{d.state.replace('_', ' ')}</td>
                    <td>
                      <ul class="timeline">
                        {d.attempts.map((a, i) => (
                          <li key={i}>{attemptText(a)}</li>
                        ))}
                      </ul>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
    </>
  );
}
