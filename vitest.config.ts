import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // test/vitest/inner/ holds a deliberately failing suite with its own
    // config, run as a child process by test/vitest/failure-output.test.ts.
    include: ['test/**/*.test.ts'],
    // The mail server and demo app the mailroom/vitest suite uses (test/vitest/).
    globalSetup: ['test/vitest/support/global-setup.ts'],
    // The suite mostly waits on sockets and on the list floor, not on the
    // CPU: Vitest's default (one worker less than the cores, so one worker
    // on a 2-core machine) ran its files one after another. Every file
    // uses its own server on free ports, so files run side by side; on 2
    // cores, 6 workers took 25-30 s where 4 took 35-43 s and 1 took 170 s.
    maxWorkers: Math.max(6, availableParallelism()),
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
