// The `mailroom` option in a file or describe changes only the keys it
// names: the config's apiURL (this run's server, away from the default
// port) survives `test.use({ mailroom: { keepOnFailure: true } })`.
import { test, expect } from 'mailroomjs/playwright';
import { API_URL } from './servers.js';

test.describe('test.use of one key', () => {
  test.use({ mailroom: { keepOnFailure: true } });

  test("keeps the config's apiURL", async ({ inbox, mailroom }) => {
    // The option itself is what test.use set; the inbox layers it over the config's.
    expect(mailroom).toEqual({ keepOnFailure: true });
    expect(inbox.client.apiURL).toBe(API_URL);
    await expect(inbox).not.toReceiveMail(undefined, { within: 500 });
  });

  test.describe('and another inside it', () => {
    test.use({ mailroom: { timeout: 7_000, apiURL: undefined } });

    test("replaces the outer test.use, as Playwright does, and still keeps the config's apiURL", async ({ inbox, mailroom }) => {
      expect(mailroom).toEqual({ timeout: 7_000, apiURL: undefined });
      expect(inbox.timeout).toBe(7_000);
      expect(inbox.client.apiURL).toBe(API_URL);
    });
  });
});
