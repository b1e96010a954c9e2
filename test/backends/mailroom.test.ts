// The backend contract on mailroom's own embedded server, with its
// long-poll: the column the catchers are compared with.
import { startServer } from '../../src/server/index.js';
import { testServerLogger } from '../support/server-log.js';
import { describeBackendContract } from './support/contract.js';

describeBackendContract(
  "mailroom's embedded server",
  async () => {
    // The suite reads the mailbox straight from the backend to check what is left (no pacer):
    // a larger list budget than the contract's one a second lets those reads through.
    const server = await startServer({ smtpPort: 0, httpPort: 0, listPerSecond: 100, logger: testServerLogger('backend contract') });
    return { backend: 'mailroom', apiURL: server.apiURL, smtpPort: server.smtpPort, domain: server.domains[0]!, stop: () => server.close() };
  },
  { sharedMailStays: false, extensions: true },
);
