// Asked when the server answers 401: it was started with `--token`. The
// token is kept in sessionStorage for this tab only (api.ts).
import { useState } from 'preact/hooks';

export function TokenForm({ rejected, onToken }: { rejected: boolean; onToken: (token: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <main class="token">
      <h1>mailroom</h1>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (value.trim()) onToken(value.trim());
        }}
      >
        <p>
          This server was started with <code>--token</code>. Enter it to read its mail; it is kept for this tab only.
        </p>
        {rejected && <p role="alert">That token was refused.</p>}
        <label for="token">Token</label>
        <input id="token" type="password" autocomplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        <button type="submit">Open</button>
      </form>
    </main>
  );
}
