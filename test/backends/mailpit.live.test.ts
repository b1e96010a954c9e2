// The backend contract on a real Mailpit, when one is given:
//   MAILROOM_MAILPIT_URL=http://127.0.0.1:8025 [MAILROOM_MAILPIT_SMTP=127.0.0.1:1025] npx vitest run test/backends/mailpit.live.test.ts
// (credentials in the URL when it is behind basic auth: http://user:pass@host:8025).
// Skipped otherwise: Mailpit cannot run on the machine the suite is built on,
// where the driver is tested against test/support/mailpit-model.ts instead.
// It only sends to fresh addresses on mailroom.test and deletes only what it sent.
import { describe, it } from 'vitest';
import { describeBackendContract } from './support/contract.js';

const url = process.env.MAILROOM_MAILPIT_URL?.trim();

if (url) {
  const [host, port] = (process.env.MAILROOM_MAILPIT_SMTP?.trim() || '127.0.0.1:1025').split(':');
  describeBackendContract(
    `a real Mailpit at ${url.replace(/\/\/[^@/]*@/, '//')}`,
    async () => ({ backend: 'mailpit', apiURL: url, smtpHost: host, smtpPort: Number(port), domain: 'mailroom.test', stop: async () => {} }),
    { sharedMailStays: true, extensions: false },
  );
} else {
  describe('a real Mailpit', () => {
    it.skip('runs when MAILROOM_MAILPIT_URL points at one', () => {});
  });
}
