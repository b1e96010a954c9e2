// The `redis` Vitest project's global setup: one redis-server for the run
// (test/support/redis-server.ts), its URL handed to the workers. Every
// server a test starts gets its own key prefix (test/server/helpers.ts), so
// files running side by side never see each other's mail.
import type { TestProject } from 'vitest/node';
import { startRedisServer } from './redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisURL: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const redis = await startRedisServer();
  project.provide('redisURL', redis.url());
  return () => redis.close();
}
