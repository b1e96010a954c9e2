// Started by e2e/failure-output.spec.ts. The mail server here is the
// worker's own, so its fault switch can make every delete fail: the
// teardown's trouble must be reported beside the test's result, never
// instead of it.
import { test as base, expect } from 'mailroomjs/playwright';
import { startServer, type MailroomServer } from 'mailroomjs/server';

const test = base.extend<{ unavailableForDeletes: () => void }, { ownServer: MailroomServer }>({
  ownServer: [
    async ({}, use) => {
      const quiet = () => {};
      const server = await startServer({ smtpPort: 0, httpPort: 0, logger: { info: quiet, warn: quiet, error: quiet } });
      await use(server);
      await server.close();
    },
    { scope: 'worker' },
  ],
  mailroom: async ({ ownServer }, use) => use({ apiURL: ownServer.apiURL }),
  unavailableForDeletes: async ({ ownServer, inbox }, use) => {
    await use(() => ownServer.faults.inject({ address: inbox.address, route: 'any', times: 10_000, fault: { kind: 'status', status: 503 } }));
  },
});

test('passes although its mailbox cannot be deleted', ({ inbox, unavailableForDeletes }) => {
  console.log(`inbox: ${inbox.address}`);
  unavailableForDeletes();
});

test('fails with its own error although its mailbox cannot be deleted', ({ inbox, unavailableForDeletes }) => {
  console.log(`inbox: ${inbox.address}`);
  unavailableForDeletes();
  expect(1, 'fails on purpose').toBe(2);
});
