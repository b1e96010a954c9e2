// How an app's provider SDK is pointed at a mailroom server: the environment
// the SDKs that read one take (Resend's RESEND_BASE_URL, the AWS SDK's
// per-service endpoint variables) and the option each of the others needs
// (docs/providers.md has them per SDK, with a runnable example). The server
// hands these out (startServer's `providers`, `mailroom serve`'s start-up
// line), and so does the client side (`providerSettings(apiURL)`), so a
// Playwright config can put them into the app's webServer environment.

export interface ProviderSettings {
  /**
   * Variables the SDKs read by themselves: `RESEND_BASE_URL`,
   * `AWS_ENDPOINT_URL_SES`, `AWS_ENDPOINT_URL_SESV2`. (The AWS SDK still
   * needs a region and any credentials: `AWS_REGION`, `AWS_ACCESS_KEY_ID`,
   * `AWS_SECRET_ACCESS_KEY`; mailroom checks only that a request is signed.)
   */
  readonly env: { readonly RESEND_BASE_URL: string; readonly AWS_ENDPOINT_URL_SES: string; readonly AWS_ENDPOINT_URL_SESV2: string };
  /** `@sendgrid/mail`: `sgMail.setApiKey(key); sgMail.client.setDefaultRequest('baseUrl', sendgrid.baseUrl)`. */
  readonly sendgrid: { readonly baseUrl: string };
  /** `postmark`: `new ServerClient(token, postmark)`. */
  readonly postmark: { readonly useHttps: boolean; readonly requestHost: string };
  /** `mailgun.js`: `new Mailgun(FormData).client({ username: 'api', key, url: mailgun.url })`. */
  readonly mailgun: { readonly url: string };
  /** `@getbrevo/brevo`: `new BrevoClient({ apiKey, baseUrl: brevo.baseUrl })`. */
  readonly brevo: { readonly baseUrl: string };
}

/** The settings for a server whose HTTP API is at `apiURL` (`http://127.0.0.1:8025`). */
export function providerSettings(apiURL: string): ProviderSettings {
  const url = new URL(apiURL);
  const base = url.origin;
  return Object.freeze({
    env: Object.freeze({ RESEND_BASE_URL: base, AWS_ENDPOINT_URL_SES: base, AWS_ENDPOINT_URL_SESV2: base }),
    sendgrid: Object.freeze({ baseUrl: `${base}/` }),
    postmark: Object.freeze({ useHttps: url.protocol === 'https:', requestHost: url.host }),
    mailgun: Object.freeze({ url: base }),
    brevo: Object.freeze({ baseUrl: `${base}/v3` }),
  });
}
