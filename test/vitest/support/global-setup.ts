// One embedded mail server and one demo app for the whole run, on free
// ports, started the way a user of mailroomjs/vitest would: in a global setup
// that hands the API's address to every `inbox` fixture with
// `project.provide('mailroom', ...)`.
import type { TestProject } from 'vitest/node';
import { startServer } from '../../../src/server/index.js';
import { startDemoApp } from '../../../fixtures/demo-app/index.js';
import { testServerLogger } from '../../support/server-log.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The fault switch lets tests read request counts (watermark read,
  // teardown delete) and make a teardown fail, over HTTP from the workers.
  const server = await startServer({ smtpPort: 0, httpPort: 0, faultInjection: true, logger: testServerLogger('vitest global setup') });
  // The app answers first and sends 100-600 ms later, so waits really wait.
  const app = await startDemoApp({ smtp: { host: '127.0.0.1', port: server.smtpPort }, sendDelayMs: [100, 600] });

  project.provide('mailroom', { apiURL: server.apiURL, domain: server.domains[0] });
  project.provide('demoAppURL', app.url);
  project.provide('mailroomSmtpPort', server.smtpPort);

  return async () => {
    await app.close();
    await server.close();
  };
}
