// The `mailroom` command line: argument parsing and the serve loop, kept out
// of src/cli.ts so it can be read (and tested) without spawning a process.
import { startServer } from './server.js';

export async function main(argv: readonly string[], _env: NodeJS.ProcessEnv): Promise<number | undefined> {
  if (argv[0] !== 'serve') {
    console.error('Usage: mailroom serve');
    return 2;
  }
  const server = await startServer({});
  console.log(`mailroom: SMTP listening on 127.0.0.1:${server.smtpPort}`);
  console.log(`mailroom: HTTP API on ${server.apiURL}/api/v1`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  return 0;
}
