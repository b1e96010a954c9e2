// maildev 3 (the devDependency) in its own process on free ports, for the
// per-test bench on a catcher (`BENCH_BACKEND=maildev npm run bench -- per-test`):
// as a team runs it, beside the app, its CLI with its defaults.
import { answersHealthz, freePort, startChild, waitFor, type ServerProcess } from './support.js';

export async function startMaildevProcess(): Promise<ServerProcess> {
  const [smtpPort, webPort] = [await freePort(), await freePort()];
  const child = startChild(process.execPath, [
    'node_modules/maildev/dist/bin/maildev.js',
    '--smtp',
    String(smtpPort),
    '--web',
    String(webPort),
    '--ip',
    '127.0.0.1',
    '--web-ip',
    '127.0.0.1',
    '--silent',
  ]);
  const apiURL = `http://127.0.0.1:${webPort}`;
  try {
    await waitFor('maildev', child, () => answersHealthz(`${apiURL}/api`), 30_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return {
    apiURL,
    smtpPort,
    stats: () => Promise.reject(new Error('maildev keeps no per-address request counts')),
    stop: () => child.stop(),
    child,
  };
}
