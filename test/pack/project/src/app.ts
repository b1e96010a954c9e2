// The README's "your app": what its Vitest global setup imports
// (`import { startApp } from '../src/app.js'`) and what its Playwright config
// runs (`npm start`). Here both are the Acme demo app from mailroom's
// repository, which the pack check puts behind `npm start`.
import { spawn } from 'node:child_process';

export interface StartedApp {
  readonly url: string;
  close(): Promise<void>;
}

/** Runs `npm start` on a free port, sending mail to `smtpHost:smtpPort`; resolves once the app says where it listens. */
export async function startApp({ smtpHost, smtpPort }: { readonly smtpHost: string; readonly smtpPort: number }): Promise<StartedApp> {
  // Its own process group, so close() stops npm, the shell and the app alike.
  const child = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, SMTP_HOST: smtpHost, SMTP_PORT: String(smtpPort), PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let printed = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      printed += chunk;
      const ready = /ready at (http:\/\/\S+)/.exec(printed);
      if (ready) resolve(ready[1]!);
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code} before the app was ready:\n${printed}`)));
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        process.kill(-child.pid!, 'SIGTERM');
      }),
  };
}
