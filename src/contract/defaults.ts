// The embedded server's defaults, which the client assumes when nothing else
// is configured: an inbox created with no options talks to `mailroom serve`
// started with none.

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_SMTP_PORT = 2525;
export const DEFAULT_HTTP_PORT = 8025;
/** The domain of fresh addresses when neither `domain` nor `MAILROOM_DOMAIN` names one. */
export const DEFAULT_DOMAIN = 'mailroom.test';
/** The mailbox API when neither `apiURL` nor `MAILROOM_API_URL` names one: `mailroom serve`'s default. */
export const DEFAULT_API_URL = `http://${DEFAULT_HOST}:${DEFAULT_HTTP_PORT}`;
