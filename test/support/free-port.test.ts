// freePort's claims hold across processes: a port given to a process that
// still lives is never given to another, even while nothing listens on it
// (a receiver taken down on purpose), and a dead process's claims are free.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { claimPort, freePort } from './free-port.js';

const HOLDER = `
import { freePort } from ${JSON.stringify(new URL('./free-port.ts', import.meta.url).href)};
console.log(await freePort());
setInterval(() => {}, 1_000);
`;

describe('freePort', () => {
  it("never gives a port another live process was given, and frees a dead one's", async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', HOLDER], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = await createInterface({ input: holder.stdout })
        [Symbol.asyncIterator]()
        .next()
        .then((r) => [r.value as string | undefined]);
      const port = Number(line);
      expect(Number.isInteger(port) && port > 0, `the holder printed ${line}`).toBe(true);
      // Nothing listens on it: only the claim keeps it from this process.
      expect(await claimPort(port)).toBe(false);
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
      // Killed, it removed nothing itself: the kernel freed its claim.
      expect(await claimPort(port)).toBe(true);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('gives each port once in a process', async () => {
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()));
    expect(new Set(ports).size).toBe(50);
  });
});
