// Choosing a backend: `backend: 'mailroom' | 'maildev' | 'mailpit'` (the
// `backend` option of createInbox and of both fixtures, else
// `MAILROOM_BACKEND`, else 'mailroom'), with `apiURL` the catcher's web
// address and `credentials` (or `http://user:pass@host` in the URL) for a
// catcher behind basic auth. Validated here, once, naming the bad value.
import { MailroomClient, normalizeApiURL } from '../client/client.js';
import { expectedError } from '../contract/validation.js';
import { BACKEND_NAMES, type BackendName, type MailBackend } from './backend.js';
import type { BasicCredentials } from './catcher-http.js';
import { MaildevBackend } from './maildev.js';
import { MailpitBackend } from './mailpit.js';

export interface BackendOptions {
  readonly backend: BackendName;
  readonly apiURL: string | URL;
  /** Bearer token: the embedded server's. */
  readonly token?: string | undefined;
  /** Basic auth: a catcher's. */
  readonly credentials?: BasicCredentials | undefined;
  readonly requestTimeout: number;
}

/** The backend's name, checked: one of the three, or a TypeError naming where it came from. */
export function parseBackendName(value: unknown, from = 'backend'): BackendName {
  if (typeof value === 'string' && (BACKEND_NAMES as readonly string[]).includes(value.trim().toLowerCase())) {
    return value.trim().toLowerCase() as BackendName;
  }
  throw expectedError(
    from,
    BACKEND_NAMES.map((n) => `"${n}"`)
      .join(', ')
      .replace(/, ([^,]*)$/, ' or $1'),
    value,
  );
}

/** Basic credentials, checked; undefined when none. */
export function parseCredentials(value: unknown, from = 'credentials'): BasicCredentials | undefined {
  if (value === undefined) return undefined;
  const c = (value !== null && typeof value === 'object' ? value : {}) as { username?: unknown; password?: unknown };
  if (typeof c.username !== 'string' || c.username === '' || c.username.includes(':') || typeof c.password !== 'string') {
    throw expectedError(from, 'an object like { username: "user", password: "secret" } (a username without ":")', value);
  }
  return Object.freeze({ username: c.username, password: c.password });
}

/** Credentials written into the URL (`http://user:pass@host`), decoded. */
export function credentialsInURL(apiURL: string | URL): BasicCredentials | undefined {
  let url: URL;
  try {
    url = new URL(apiURL instanceof URL ? apiURL.href : apiURL);
  } catch {
    return undefined; // normalizeApiURL names the bad URL
  }
  if (url.username === '' && url.password === '') return undefined;
  return { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
}

export function createBackend(options: BackendOptions): MailBackend {
  const credentials = options.credentials ?? credentialsInURL(options.apiURL);
  const apiURL = normalizeApiURL(options.apiURL);
  if (options.backend === 'mailroom') {
    if (credentials) {
      throw new TypeError(
        "Basic-auth `credentials` are for a catcher (maildev, Mailpit); mailroom's embedded server takes a bearer `token` (MAILROOM_TOKEN). Remove the credentials or choose the catcher's `backend`.",
      );
    }
    return new MailroomClient({ apiURL, token: options.token, requestTimeout: options.requestTimeout });
  }
  if (options.token !== undefined) {
    throw new TypeError(
      `A bearer \`token\` is for mailroom's embedded server; ${options.backend} takes basic auth: \`credentials: { username, password }\` (or http://user:pass@host in apiURL). Unset MAILROOM_TOKEN or the \`token\` option.`,
    );
  }
  const catcher = { apiURL, credentials, requestTimeout: options.requestTimeout };
  return options.backend === 'maildev' ? new MaildevBackend(catcher) : new MailpitBackend(catcher);
}
