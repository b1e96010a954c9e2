import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['signup.vitest.ts'],
    globalSetup: ['vitest.setup.ts'],
    testTimeout: 40_000,
  },
});
