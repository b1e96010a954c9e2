// A miniature src/ in the target layout where every import is legal: each
// layer imports the layers below it, deep server folders import upward within
// the server, the adapters import their runner's npm package, and cli/ imports
// from both halves. Type-only and re-export edges are here too, because the
// rules must not forbid them where a plain import is allowed.
export const LEGAL_TREE: Readonly<Record<string, string>> = {
  'src/index.ts': [
    "export { type Wire, slugOf } from './contract/index.js';",
    "export { MailroomClient } from './client/client.js';",
    "export { poll } from './wait/poll.js';",
    "export { openInbox } from './inbox/inbox.js';",
  ].join('\n'),

  'src/contract/index.ts': ["export type { Wire } from './wire.js';", "export { slugOf } from './slug.js';"].join('\n'),
  'src/contract/wire.ts': ["import type { Slug } from './slug.js';", 'export interface Wire { slug: Slug }'].join('\n'),
  'src/contract/slug.ts': ['export type Slug = string;', 'export const slugOf = (s: string): Slug => s.toLowerCase();'].join('\n'),

  'src/client/client.ts': [
    "import type { Wire } from '../contract/index.js';",
    "import { ClientError } from './errors.js';",
    'export class MailroomClient { read(): Wire { throw new ClientError(); } }',
  ].join('\n'),
  'src/client/errors.ts': 'export class ClientError extends Error {}',

  'src/backends/backend.ts': [
    "import type { MailroomClient } from '../client/client.js';",
    "import type { Wire } from '../contract/wire.js';",
    'export type MailBackend = Pick<MailroomClient, "read"> & { wire?: Wire };',
  ].join('\n'),

  'src/wait/clock.ts': 'export const now = (): number => Date.now();',
  'src/wait/poll.ts': [
    "import { slugOf } from '../contract/slug.js';",
    "import type { MailroomClient } from '../client/client.js';",
    "import { now } from './clock.js';",
    "import type { MailBackend } from '../backends/backend.js';",
    'export type Polled = MailBackend;',
    'export const poll = (client: MailroomClient) => ({ client, at: now(), slug: slugOf("x") });',
  ].join('\n'),

  'src/inbox/inbox.ts': [
    "import { MailroomClient } from '../client/client.js';",
    "import { poll } from '../wait/poll.js';",
    "import { Mail } from './mail.js';",
    'export const openInbox = () => ({ waited: poll(new MailroomClient()), mail: new Mail() });',
  ].join('\n'),
  'src/inbox/mail.ts': ["import type { Wire } from '../contract/wire.js';", 'export class Mail { wire?: Wire }'].join('\n'),

  'src/runner/index.ts': [
    "import { openInbox } from '../inbox/inbox.js';",
    "import { ClientError } from '../client/errors.js';",
    'export const testInbox = () => ({ inbox: openInbox(), ClientError });',
  ].join('\n'),

  'src/playwright/index.ts': [
    "import { test } from '@playwright/test';",
    "import { testInbox } from '../runner/index.js';",
    'export const fixtures = test.extend({ inbox: async ({}, use) => use(testInbox()) });',
  ].join('\n'),
  'src/vitest/index.ts': [
    "import { afterEach } from 'vitest';",
    "import type { TestContext } from 'vitest';",
    "import { testInbox } from '../runner/index.js';",
    'export const useInbox = (_context: TestContext) => { afterEach(() => {}); return testInbox(); };',
  ].join('\n'),

  'src/mcp/tools.ts': ["import type { Wire } from '../contract/index.js';", 'export const tools: Wire[] = [];'].join('\n'),

  'src/server/index.ts': [
    "import { tools } from '../mcp/tools.js';",
    "import { listen } from './smtp/listen.js';",
    "import { store } from './store/store.js';",
    "import { endpoint } from './mcp/endpoint.js';",
    'export const startServer = () => ({ tools, smtp: listen(), store, endpoint });',
  ].join('\n'),
  'src/server/smtp/listen.ts': [
    "import { createServer } from 'node:net';",
    "import { slugOf } from '../../contract/slug.js';",
    "import { store } from '../store/store.js';",
    'export const listen = () => ({ net: createServer(), slug: slugOf("x"), store });',
  ].join('\n'),
  'src/server/mcp/endpoint.ts': [
    "import { tools } from '../../mcp/tools.js';",
    "import { store } from '../store/store.js';",
    'export const endpoint = () => ({ tools, store });',
  ].join('\n'),
  'src/server/store/store.ts': ["import type { Wire } from '../../contract/wire.js';", 'export const store: Wire[] = [];'].join('\n'),

  'src/cli/main.ts': [
    "import { startServer } from '../server/index.js';",
    "import { tools } from '../mcp/tools.js';",
    "import { openInbox } from '../index.js';",
    "import { testInbox } from '../runner/index.js';",
    "import { useInbox } from '../vitest/index.js';",
    'export const main = async () => ({ server: startServer(), tools, inbox: openInbox(), testInbox, useInbox });',
  ].join('\n'),
};
