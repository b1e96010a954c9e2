// Choosing a backend: the option, MAILROOM_BACKEND, each catcher's default
// web address, credentials in the option or the URL, and the refusals that
// name what was wrong.
import { describe, expect, it } from 'vitest';
import { MailroomClient } from '../../src/index.js';
import { createBackend } from '../../src/backends/choose.js';
import { MaildevBackend } from '../../src/backends/maildev.js';
import { MailpitBackend } from '../../src/backends/mailpit.js';
import { resolveConnection } from '../../src/inbox/inbox-options.js';
import { validateTestOptions } from '../../src/runner/test-options.js';

describe('choosing a backend', () => {
  it("is 'mailroom' unless the option or MAILROOM_BACKEND says otherwise; the option wins", () => {
    expect(resolveConnection({}, {})).toMatchObject({ backend: 'mailroom', apiURL: 'http://127.0.0.1:8025' });
    expect(resolveConnection({}, { MAILROOM_BACKEND: 'maildev' })).toMatchObject({ backend: 'maildev', apiURL: 'http://127.0.0.1:1080' });
    expect(resolveConnection({}, { MAILROOM_BACKEND: ' Mailpit ' })).toMatchObject({ backend: 'mailpit', apiURL: 'http://127.0.0.1:8025' });
    expect(resolveConnection({ backend: 'mailroom' }, { MAILROOM_BACKEND: 'maildev' })).toMatchObject({ backend: 'mailroom' });
    expect(resolveConnection({}, { MAILROOM_BACKEND: 'maildev', MAILROOM_API_URL: 'http://catcher:1080/' })).toMatchObject({ apiURL: 'http://catcher:1080' });
  });

  it('refuses an unknown backend, naming where it came from', () => {
    expect(() => resolveConnection({}, { MAILROOM_BACKEND: 'mailhog' })).toThrow(
      'Expected `MAILROOM_BACKEND` to be "mailroom", "maildev" or "mailpit", got "mailhog"',
    );
    expect(() => resolveConnection({ backend: 'smtp4dev' as never }, {})).toThrow(
      'Expected `backend` to be "mailroom", "maildev" or "mailpit", got "smtp4dev"',
    );
    expect(() => validateTestOptions({ backend: 'mailhog' })).toThrow('Expected `mailroom.backend` to be');
  });

  it('takes basic credentials from the option or from the URL, and keeps them out of apiURL', () => {
    const fromURL = resolveConnection({ apiURL: 'http://me:p%40ss@127.0.0.1:8025' }, { MAILROOM_BACKEND: 'mailpit' });
    expect(fromURL).toMatchObject({ apiURL: 'http://127.0.0.1:8025', credentials: { username: 'me', password: 'p@ss' } });
    const given = resolveConnection({ credentials: { username: 'a', password: 'b' } }, {});
    expect(given.credentials).toEqual({ username: 'a', password: 'b' });
    expect(() => resolveConnection({ credentials: { username: '', password: 'x' } }, {})).toThrow('Expected `credentials` to be an object like');
    expect(() => validateTestOptions({ credentials: 'me:secret' })).toThrow('Expected `mailroom.credentials` to be an object like');
  });

  it("makes each backend's driver, and refuses the other's kind of secret", () => {
    const base = { requestTimeout: 1_000 };
    expect(createBackend({ ...base, backend: 'mailroom', apiURL: 'http://127.0.0.1:8025' })).toBeInstanceOf(MailroomClient);
    expect(createBackend({ ...base, backend: 'maildev', apiURL: 'http://127.0.0.1:1080' })).toBeInstanceOf(MaildevBackend);
    expect(createBackend({ ...base, backend: 'mailpit', apiURL: 'http://127.0.0.1:8025' })).toBeInstanceOf(MailpitBackend);
    expect(() => createBackend({ ...base, backend: 'maildev', apiURL: 'http://127.0.0.1:1080', token: 't' })).toThrow(
      "A bearer `token` is for mailroom's embedded server; maildev takes basic auth",
    );
    expect(() => createBackend({ ...base, backend: 'mailroom', apiURL: 'http://u:p@127.0.0.1:8025' })).toThrow('Basic-auth `credentials` are for a catcher');
  });
});
