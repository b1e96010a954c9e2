// The mailboxes that hold mail, newest arrival first, searchable by address.
import type { WireMailboxEntry } from '../../contract/wire.js';
import { When } from './when.js';

export function MailboxList(props: {
  mailboxes: readonly WireMailboxEntry[];
  total: number;
  /** The search stopped at its window (the 5,000 newest mailboxes): more may match further down. */
  partial: boolean;
  search: string;
  selected: string | undefined;
  onSearch: (text: string) => void;
  onOpen: (address: string) => void;
}) {
  const { mailboxes, total, partial, search, selected } = props;
  return (
    <nav class="pane mailboxes" aria-label="Mailboxes">
      <div class="pane-head">
        <label class="visually-hidden" for="search">
          Search mailboxes
        </label>
        <input id="search" type="search" placeholder="Search by address  ( / )" value={search} onInput={(e) => props.onSearch(e.currentTarget.value)} />
      </div>
      {mailboxes.length === 0 ? (
        <p class="empty">{search ? `No mailbox matches “${search}”.` : 'No mail yet. Send some to any address at a served domain.'}</p>
      ) : (
        <ul>
          {mailboxes.map((m) => (
            <li key={m.address}>
              <a
                href={`?address=${encodeURIComponent(m.address)}`}
                aria-current={m.address === selected ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  props.onOpen(m.address);
                }}
              >
                <span class="address" title={m.address}>
                  {m.address}
                </span>
                <span class="count" aria-label={`${m.count} messages`}>
                  {m.count}
                </span>
                <span class="subject">{m.newest.subject || '(no subject)'}</span>
                <When iso={m.newest.received_at} />
              </a>
            </li>
          ))}
        </ul>
      )}
      {total > mailboxes.length && <p class="more">{total - mailboxes.length} more: search to narrow the list.</p>}
      {partial && <p class="more">Searched the newest mailboxes only: more may match further down.</p>}
    </nav>
  );
}
