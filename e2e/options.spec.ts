// The `mailroom` option in a file or describe changes only the keys it
// names: the config's apiURL (this run's server, away from the default
// port) survives `test.use({ mailroom: { keepOnFailure: true } })`.
import { test, expect } from 'mailroomjs/playwright';
import { API_URL } from './servers.js';

test.describe('test.use of one key', () => {
  test.use({ mailroom: { keepOnFailure: true } });

  test("keeps the config's apiURL", async ({ inbox, mailroom }) => {
    // Playwright hands the fixture only what test.use set (the config's
    // apiURL is not in it); the inbox layers it over the config's.
    expect(mailroom.apiURL).toBeUndefined();
    expect(inbox.client.apiURL).toBe(API_URL);
    await expect(inbox).not.toReceiveMail(undefined, { within: 500 });
  });

  test.describe('and another inside it', () => {
    test.use({ mailroom: { timeout: 7_000, apiURL: undefined } });

    test("replaces the outer test.use, as Playwright does, and still keeps the config's apiURL", async ({ inbox, mailroom }) => {
      // What it set reaches the inbox; the apiURL it set to undefined does not hide the config's.
      expect(mailroom.apiURL).toBeUndefined();
      expect(inbox.timeout).toBe(7_000);
      expect(inbox.client.apiURL).toBe(API_URL);
    });
  });
});
