import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // test/vitest/inner/ holds a deliberately failing suite with its own
    // config, run as a child process by test/vitest/failure-output.test.ts.
    include: ['test/**/*.test.ts'],
    // The mail server and demo app the mailroom/vitest suite uses (test/vitest/).
    globalSetup: ['test/vitest/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
  },
});
