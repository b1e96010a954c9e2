// One embedded mail server for the run, from the installed `mailroom/server`,
// handed to every `inbox` fixture with `provide`.
import type { TestProject } from 'vitest/node';
import { startServer } from 'mailroom/server';

export default async function setup(project: TestProject) {
  const server = await startServer({ smtpPort: Number(process.env.PACK_SMTP_PORT), httpPort: Number(process.env.PACK_HTTP_PORT) });
  project.provide('mailroom', { apiURL: server.apiURL });
  return () => server.close();
}
