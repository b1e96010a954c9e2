// The web UI of `mailroom serve`: mailboxes, their messages, one message.
// The URL holds where the person is (`/?address=A&id=ID`), so a link opens a
// mailbox or a message directly and Back works. New mail appears as it
// arrives: the event stream says which message landed where, with its
// summary, so watching costs no call at all (the budgets of an address
// belong to the test waiting on it).
import { render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { WireHealth, WireMailboxEntry, WireMailEvent, WireMessage, WireSummary } from '../../contract/wire.js';
import { ApiError, api, followEvents, storeToken, summaryOf } from './api.js';
import { MailboxList } from './mailbox-list.js';
import { MessageList } from './message-list.js';
import { MessageView } from './message-view.js';
import { TokenForm } from './token-form.js';

interface Place {
  readonly address?: string;
  readonly id?: string;
}

function placeFromURL(): Place {
  const params = new URLSearchParams(location.search);
  const address = params.get('address')?.trim().toLowerCase() || undefined;
  const id = (address && params.get('id')) || undefined;
  return { address, id };
}

function urlOf({ address, id }: Place): string {
  const params = new URLSearchParams();
  if (address) params.set('address', address);
  if (address && id) params.set('id', id);
  const query = params.toString();
  return query ? `/?${query}` : '/';
}

type Auth = 'unknown' | 'ok' | 'needed' | 'rejected';

// Over 80 lines on purpose: a Preact component's hooks must run in the same
// order on every render, so the page's state (place, token, lists, stream)
// lives in this one function; what it renders is in the components it uses.
function App() {
  const [place, setPlace] = useState<Place>(placeFromURL);
  const [auth, setAuth] = useState<Auth>('unknown');
  const [features, setFeatures] = useState<WireHealth['features']>({});
  const [search, setSearch] = useState('');
  const [index, setIndex] = useState<{ total: number; mailboxes: readonly WireMailboxEntry[]; partial?: true }>({ total: 0, mailboxes: [] });
  const [messages, setMessages] = useState<readonly WireSummary[]>([]);
  const [message, setMessage] = useState<WireMessage>();
  const [problem, setProblem] = useState<string>();
  const [live, setLive] = useState(false);
  const [confirmEmpty, setConfirmEmpty] = useState(false);
  const placeRef = useRef(place);
  placeRef.current = place;

  const go = useCallback((next: Place, replace = false) => {
    history[replace ? 'replaceState' : 'pushState'](null, '', urlOf(next));
    setPlace(next);
    setConfirmEmpty(false);
  }, []);

  useEffect(() => {
    const onPop = () => setPlace(placeFromURL());
    addEventListener('popstate', onPop);
    return () => removeEventListener('popstate', onPop);
  }, []);

  /** Every failure ends here: a 401 asks for the token, anything else is said on the page. */
  const fail = useCallback((error: unknown) => {
    if (error instanceof ApiError && error.status === 401) {
      setAuth((was) => (was === 'needed' || was === 'rejected' ? 'rejected' : 'needed'));
      return;
    }
    setProblem(error instanceof Error ? error.message : String(error));
  }, []);

  const loadIndex = useCallback(
    (contains: string) =>
      api.mailboxes(contains).then((answer) => {
        setAuth('ok');
        setIndex(answer);
      }, fail),
    [fail],
  );

  // Features first (healthz needs no token), then the index: a 401 there asks for the token.
  useEffect(() => {
    api.health().then((health) => setFeatures(health.features), fail);
  }, [fail]);
  useEffect(() => {
    const timer = setTimeout(() => void loadIndex(search), search ? 150 : 0);
    return () => clearTimeout(timer);
  }, [search, auth === 'ok', loadIndex]);

  // The open mailbox's messages: one list call when it is opened.
  useEffect(() => {
    setMessages([]);
    if (!place.address || auth !== 'ok') return;
    let current = true;
    const address = place.address;
    const list = (): void => {
      api.listing(address).then(
        // Arrivals the event stream added while the listing was on its way stay:
        // replacing the list with an answer taken before them lost them (seen in CI).
        (answer) => current && setMessages((live) => newestFirst([...answer.messages, ...live.filter((m) => !answer.messages.some((a) => a.id === m.id))])),
        (error: unknown) => {
          // The address's list budget is shared with any test waiting on it: wait as asked.
          if (current && error instanceof ApiError && error.status === 429) setTimeout(list, error.retryAfterMs ?? 1_000);
          else if (current) fail(error);
        },
      );
    };
    list();
    return () => {
      current = false;
    };
  }, [place.address, auth]);

  // The open message.
  useEffect(() => {
    setMessage(undefined);
    if (!place.address || !place.id || auth !== 'ok') return;
    let current = true;
    api.message(place.address, place.id).then(
      (answer) => current && setMessage(answer),
      (error: unknown) => {
        if (error instanceof ApiError && error.status === 404) {
          if (current) setProblem('That message is gone: it expired or was deleted.');
        } else fail(error);
      },
    );
    return () => {
      current = false;
    };
  }, [place.address, place.id, auth]);

  // Live updates for as long as the page is open.
  const searchRef = useRef(search);
  searchRef.current = search;
  useEffect(() => {
    if (auth !== 'ok' || !features.events) return;
    const stop = new AbortController();
    // At most one index refresh a second, however fast mail arrives (the index walks every mailbox).
    let indexTimer: ReturnType<typeof setTimeout> | undefined;
    const refreshIndex = () => {
      indexTimer ??= setTimeout(() => {
        indexTimer = undefined;
        void loadIndex(searchRef.current);
      }, 1_000);
    };
    const add = (arrived: WireSummary, address: string) => {
      if (placeRef.current.address !== address) return;
      setMessages((list) => (list.some((m) => m.id === arrived.id) ? list : newestFirst([arrived, ...list])));
    };
    const onEvent = (event: WireMailEvent) => {
      refreshIndex();
      if (event.address !== placeRef.current.address) return;
      if (event.type === 'removed') {
        setMessages((list) => list.filter((m) => m.id !== event.id));
        return;
      }
      // The event carries the summary; a server that sends none is asked for the message.
      if (event.summary) add(event.summary, event.address);
      else api.message(event.address, event.id).then((arrived) => add(summaryOf(arrived), event.address), fail);
    };
    void followEvents(features.events, { onEvent, onOpen: () => setLive(true), onError: fail }, stop.signal).finally(() => setLive(false));
    return () => {
      stop.abort();
      clearTimeout(indexTimer);
    };
  }, [auth, features.events, loadIndex, fail]);

  const deleteMessage = useCallback(async () => {
    const { address, id } = placeRef.current;
    if (!address || !id) return;
    try {
      await api.deleteMessage(address, id);
      setMessages((list) => list.filter((m) => m.id !== id));
      go({ address });
    } catch (error) {
      fail(error);
    }
  }, [go, fail]);

  const emptyMailbox = useCallback(async () => {
    const { address } = placeRef.current;
    if (!address) return;
    if (!confirmEmpty) {
      setConfirmEmpty(true);
      return;
    }
    try {
      await api.deleteMailbox(address);
      setMessages([]);
      setConfirmEmpty(false);
      void loadIndex(searchRef.current);
    } catch (error) {
      fail(error);
    }
  }, [confirmEmpty, loadIndex, fail]);

  // Keyboard: j/k or the arrows move through the messages, Enter or o opens,
  // Delete or # deletes the open message, / searches, Escape goes back.
  const messagesRef = useRef(messages);
  messagesRef.current = messages;
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) {
        if (event.key === 'Escape') target.blur();
        return;
      }
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      const { address, id } = placeRef.current;
      const list = messagesRef.current;
      const at = list.findIndex((m) => m.id === id);
      const move = (to: number) => {
        const next = list[Math.max(0, Math.min(list.length - 1, to))];
        if (address && next) {
          go({ address, id: next.id }, true);
          document.getElementById(`message-${next.id}`)?.scrollIntoView({ block: 'nearest' });
        }
      };
      if (event.key === 'j' || event.key === 'ArrowDown') move(at + 1);
      else if (event.key === 'k' || event.key === 'ArrowUp') move(at === -1 ? 0 : at - 1);
      else if ((event.key === 'Enter' || event.key === 'o') && at === -1) move(0);
      else if ((event.key === 'Delete' || event.key === '#') && id) void deleteMessage();
      else if (event.key === '/') document.getElementById('search')?.focus();
      else if (event.key === 'Escape') go(id ? { address } : {});
      else return;
      event.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [go, deleteMessage]);

  if (auth === 'needed' || auth === 'rejected') {
    return (
      <TokenForm
        rejected={auth === 'rejected'}
        onToken={(token) => {
          storeToken(token);
          void loadIndex(search);
        }}
      />
    );
  }

  const depth = place.id ? 'at-message' : place.address ? 'at-mailbox' : 'at-index';
  return (
    <div class={`app ${depth}`}>
      <header class="top">
        <a
          class="brand"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            go({});
          }}
        >
          mailroom
        </a>
        <span class={live ? 'live on' : 'live'} role="status">
          {live ? 'Live' : 'Connecting…'}
        </span>
      </header>
      {problem && (
        <p class="problem" role="alert">
          {problem}{' '}
          <button type="button" onClick={() => setProblem(undefined)}>
            Dismiss
          </button>
        </p>
      )}
      <div class="panes">
        <MailboxList
          mailboxes={index.mailboxes}
          total={index.total}
          partial={index.partial === true}
          search={search}
          selected={place.address}
          onSearch={setSearch}
          onOpen={(address) => go({ address })}
        />
        {place.address ? (
          <MessageList
            address={place.address}
            messages={messages}
            selected={place.id}
            confirmEmpty={confirmEmpty}
            onOpen={(id) => go({ address: place.address, id })}
            onEmpty={() => void emptyMailbox()}
            onBack={() => go({})}
          />
        ) : (
          <section class="pane messages placeholder">
            <p class="empty">Pick a mailbox, or open one directly: /?address=someone@mailroom.test</p>
          </section>
        )}
        {place.address && place.id && message ? (
          <MessageView
            address={place.address}
            message={message}
            features={features}
            onDelete={() => void deleteMessage()}
            onBack={() => go({ address: place.address })}
          />
        ) : (
          <section class="pane message placeholder">
            <p class="empty">{place.id ? 'Loading…' : 'Pick a message to read it.'}</p>
          </section>
        )}
      </div>
    </div>
  );
}

render(<App />, document.getElementById('app')!);

/** Ids sort by arrival within a mailbox (docs/CONTRACT.md), so the newest has the greatest. */
function newestFirst(list: readonly WireSummary[]): WireSummary[] {
  return [...list].sort((a, b) => (a.id < b.id ? 1 : -1));
}
