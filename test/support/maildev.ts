// A real maildev 3 (the devDependency) on free loopback ports, for the tests
// and the bench that run mailroom against it: `apiURL` is its web address,
// `smtpPort` where mail goes. Each one keeps its mail in its own temporary
// directory, removed at stop.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailDev } from 'maildev';
import { freePort } from './free-port.js';

export interface RunningMaildev {
  readonly apiURL: string;
  readonly smtpPort: number;
  stop(): Promise<void>;
}

export async function startMaildev(options: { webUser?: string; webPass?: string } = {}): Promise<RunningMaildev> {
  const [smtp, web] = [await freePort(), await freePort()];
  const mailDirectory = await mkdtemp(join(tmpdir(), 'mailroom-maildev-'));
  const maildev = new MailDev({ smtp, web, ip: '127.0.0.1', webIp: '127.0.0.1', silent: true, mailDirectory, ...options });
  const info = console.info;
  // Its API prints "MailDev API running at ..." whatever `silent` says.
  console.info = () => {};
  try {
    await maildev.start();
  } finally {
    console.info = info;
  }
  return {
    apiURL: `http://127.0.0.1:${web}`,
    smtpPort: smtp,
    async stop() {
      await maildev.stop();
      await rm(mailDirectory, { recursive: true, force: true });
    },
  };
}
