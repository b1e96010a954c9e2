// The config of a deliberately failing run, started as a child process by
// test/vitest/failure-output.test.ts (never by the outer `vitest run`, whose
// include only matches *.test.ts). The mail server and the demo app are the
// outer run's: their addresses come in through the environment, the way a
// CI job would point at a running `mailroom serve` (MAILROOM_API_URL).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/vitest/inner/*.inner.ts'],
    reporters: ['default', './test/vitest/inner/annotations-reporter.ts'],
    testTimeout: 20_000,
  },
});
