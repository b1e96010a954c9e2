// A mailbox's messages, newest first: sender, subject, time and size.
// Arrow keys or j/k move through them (app.tsx), Enter opens one.
import type { WireSummary } from '../../contract/wire.js';
import { formatSize } from './format.js';
import { When } from './when.js';

export function MessageList(props: {
  address: string;
  messages: readonly WireSummary[];
  selected: string | undefined;
  confirmEmpty: boolean;
  onOpen: (id: string) => void;
  onEmpty: () => void;
  onBack: () => void;
}) {
  const { address, messages, selected } = props;
  return (
    <section class="pane messages" aria-label={`Messages to ${address}`}>
      <div class="pane-head">
        <button type="button" class="back" onClick={props.onBack}>
          ← Mailboxes
        </button>
        <h2 title={address}>{address}</h2>
        <button type="button" class="danger" disabled={messages.length === 0} onClick={props.onEmpty}>
          {props.confirmEmpty ? `Really delete all ${messages.length}?` : 'Empty mailbox'}
        </button>
      </div>
      {messages.length === 0 ? (
        <p class="empty">No mail for {address} yet. New mail shows up here as it arrives.</p>
      ) : (
        <ul role="listbox" aria-label="Messages">
          {messages.map((m) => (
            <li key={m.id} id={`message-${m.id}`} role="option" tabIndex={-1} aria-selected={m.id === selected} onClick={() => props.onOpen(m.id)}>
              <span class="from">{m.from}</span>
              <When iso={m.received_at} />
              <span class="subject">{m.subject || '(no subject)'}</span>
              <span class="size">{formatSize(m.size)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
