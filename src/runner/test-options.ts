// The plugin options (`use: { mailroom: {...} }` in Playwright, `provide` or
// `test.override` in Vitest), validated at the edge, naming the offending key,
// and layered key by key: a file or test that changes one setting keeps the
// others (the config's `apiURL` above all), in both runners.
import { assertMs } from '../contract/validation.js';
import type { ConnectionOptions } from '../inbox/inbox-options.js';
import { expectedError } from '../contract/validation.js';
import { parseBackendName, parseCredentials } from '../backends/choose.js';

/**
 * What a user sets per project or per test (`use: { mailroom: {...} }`).
 * `domain` and `token` are the core's connection options; `apiURL` is a
 * string only, because runners pass options between processes.
 */
export interface MailroomTestOptions extends Pick<ConnectionOptions, 'domain' | 'token' | 'backend' | 'credentials'> {
  /**
   * The mailbox API, or the catcher's web address. Default: `MAILROOM_API_URL`,
   * else `http://127.0.0.1:8025` (maildev: `http://127.0.0.1:1080`).
   */
  readonly apiURL?: string | undefined;
  /** Budget of each wait for mail, in ms (default 30 s); the test's own deadline still caps it. */
  readonly timeout?: number | undefined;
  /** Keep a failed test's mailbox (and print its address) instead of deleting it. */
  readonly keepOnFailure?: boolean | undefined;
  /** Attach received mail, and on failure what was seen, to the report (default true). */
  readonly attach?: boolean | undefined;
  /**
   * A PNG of every mail the test received, rendered in a browser at a fixed
   * width, next to its HTML and text: `'off'`, `'on'` or `'only-on-failure'`
   * (default). Playwright only: Vitest refuses any value but `'off'`.
   */
  readonly screenshots?: ScreenshotMode | undefined;
}

/** When to attach a picture of each received mail. */
export type ScreenshotMode = 'off' | 'on' | 'only-on-failure';

export const SCREENSHOT_MODES: readonly ScreenshotMode[] = Object.freeze(['off', 'on', 'only-on-failure']);

/** The default: a picture costs a browser page per mail, so only a failed test pays it. */
export const DEFAULT_SCREENSHOTS: ScreenshotMode = 'only-on-failure';

const OPTION_KEYS = new Set(['apiURL', 'domain', 'token', 'timeout', 'keepOnFailure', 'attach', 'screenshots', 'backend', 'credentials']);

/** Validates the plugin options at the edge, naming the offending key. */
export function validateTestOptions(options: unknown): MailroomTestOptions {
  if (options === undefined || options === null) return Object.freeze({});
  if (typeof options !== 'object') throw expectedError('mailroom', 'an object', options);
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.has(key)) throw new TypeError(`Unknown \`mailroom\` option \`${key}\`; expected one of ${[...OPTION_KEYS].join(', ')}`);
  }
  const o = options as MailroomTestOptions;
  if (o.timeout !== undefined) assertMs('mailroom.timeout', o.timeout);
  if (o.backend !== undefined) parseBackendName(o.backend, 'mailroom.backend');
  parseCredentials(o.credentials, 'mailroom.credentials');
  for (const key of ['keepOnFailure', 'attach'] as const) {
    if (o[key] !== undefined && typeof o[key] !== 'boolean') throw expectedError(`mailroom.${key}`, 'a boolean', o[key]);
  }
  if (o.screenshots !== undefined && !SCREENSHOT_MODES.includes(o.screenshots)) {
    throw expectedError('mailroom.screenshots', '"off", "on" or "only-on-failure"', o.screenshots);
  }
  return Object.freeze({ ...o });
}

/**
 * One test's options from its layers, later wins key by key: the config's
 * (Playwright's project `use`, Vitest's provided value), then the closest
 * `test.use` or `test.override`. Each layer is validated on its own, so a
 * misspelt key fails naming itself; a key a later layer leaves out or sets
 * to undefined keeps the earlier value. Keys no layer sets fall back to the
 * `MAILROOM_*` environment variables and the defaults, in createInbox.
 */
export function layerTestOptions(...layers: readonly unknown[]): MailroomTestOptions {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(validateTestOptions(layer))) {
      if (value !== undefined) merged[key] = value;
    }
  }
  return Object.freeze(merged as MailroomTestOptions);
}
