// A miniature src/ in the target layout where every import is legal: each
// layer imports the layers below it, each server folder imports the server
// folders below it, the adapters import their runner's npm package, and cli/ imports
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

  // The server in its folders (.dependency-cruiser.mjs SERVER_LAYERS), each
  // importing every folder it may, so the rules are seen to allow each arrow.
  'src/server/index.ts': [
    "import { tools } from '../mcp/tools.js';",
    "import { listen } from './smtp/listen.js';",
    "import { store } from './store/store.js';",
    "import { handle } from './http/api.js';",
    "import { RedisStore } from './redis/redis-store.js';",
    'export const startServer = () => ({ tools, smtp: listen(), store, handle, RedisStore });',
  ].join('\n'),
  'src/server/base/awaitable.ts': 'export type Awaitable<T> = T | Promise<T>;',
  'src/server/budgets/budget.ts': ["import type { Awaitable } from '../base/awaitable.js';", 'export const spend = (): Awaitable<void> => undefined;'].join(
    '\n',
  ),
  'src/server/store/store.ts': [
    "import type { Wire } from '../../contract/wire.js';",
    "import type { Awaitable } from '../base/awaitable.js';",
    'export const store: Wire[] = [];',
    'export const count = (): Awaitable<number> => store.length;',
  ].join('\n'),
  'src/server/rules/lab.ts': [
    "import { spend } from '../budgets/budget.js';",
    "import { store } from '../store/store.js';",
    'export const lab = () => ({ spend, store });',
  ].join('\n'),
  'src/server/webhooks/service.ts': ["import { count } from '../store/store.js';", 'export const webhooks = () => count();'].join('\n'),
  'src/server/waits/hold.ts': [
    "import { spend } from '../budgets/budget.js';",
    "import { count } from '../store/store.js';",
    'export const hold = () => ({ spend, count });',
  ].join('\n'),
  'src/server/mail-checks/threads.ts': [
    "import type { Awaitable } from '../base/awaitable.js';",
    "import { count } from '../store/store.js';",
    'export const checkThreads = (): Awaitable<number> => count();',
  ].join('\n'),
  'src/server/smtp/listen.ts': [
    "import { createServer } from 'node:net';",
    "import { slugOf } from '../../contract/slug.js';",
    "import { store } from '../store/store.js';",
    "import { lab } from '../rules/lab.js';",
    'export const listen = () => ({ net: createServer(), slug: slugOf("x"), store, lab });',
  ].join('\n'),
  'src/server/providers/intake.ts': [
    "import { store } from '../store/store.js';",
    "import { lab } from '../rules/lab.js';",
    'export const intake = () => ({ store, lab });',
  ].join('\n'),
  'src/server/redis/redis-store.ts': [
    "import type { Awaitable } from '../base/awaitable.js';",
    "import { spend } from '../budgets/budget.js';",
    "import { count } from '../store/store.js';",
    "import { lab } from '../rules/lab.js';",
    "import { webhooks } from '../webhooks/service.js';",
    'export class RedisStore { parts = { spend, count, lab, webhooks }; ready: Awaitable<boolean> = true; }',
  ].join('\n'),
  'src/server/http/edge/checks.ts': [
    "import { count } from '../../store/store.js';",
    'export const checks = [() => (count() === 0 ? undefined : "refused")];',
  ].join('\n'),
  'src/server/http/mailbox/routes.ts': [
    "import { checks } from '../edge/checks.js';",
    "import { hold } from '../../waits/hold.js';",
    "import { spend } from '../../budgets/budget.js';",
    "import { checkThreads } from '../../mail-checks/threads.js';",
    'export const mailbox = () => ({ checks, hold, spend, checkThreads });',
  ].join('\n'),
  'src/server/http/web-ui/assets.ts': ["import { checks } from '../edge/checks.js';", 'export const assets = () => checks;'].join('\n'),
  'src/server/http/mcp/endpoint.ts': [
    "import { tools } from '../../../mcp/tools.js';",
    "import { store } from '../../store/store.js';",
    "import { lab } from '../../rules/lab.js';",
    "import { hold } from '../../waits/hold.js';",
    "import { checks } from '../edge/checks.js';",
    'export const endpoint = () => ({ tools, store, lab, hold, checks });',
  ].join('\n'),
  'src/server/http/lab/routes.ts': [
    "import { lab } from '../../rules/lab.js';",
    "import { checks } from '../edge/checks.js';",
    'export const labRoutes = () => ({ lab, checks });',
  ].join('\n'),
  'src/server/http/webhooks/routes.ts': [
    "import { webhooks } from '../../webhooks/service.js';",
    "import { checks } from '../edge/checks.js';",
    'export const webhookRoutes = () => ({ webhooks, checks });',
  ].join('\n'),
  'src/server/http/providers/answer.ts': [
    "import { intake } from '../../providers/intake.js';",
    "import { checks } from '../edge/checks.js';",
    'export const answer = () => ({ intake, checks });',
  ].join('\n'),
  'src/server/http/test-hooks/faults.ts': [
    "import { mailbox } from '../mailbox/routes.js';",
    "import { checks } from '../edge/checks.js';",
    'export const faults = () => ({ mailbox, checks });',
  ].join('\n'),
  'src/server/http/api.ts': [
    "import { checks } from './edge/checks.js';",
    "import { mailbox } from './mailbox/routes.js';",
    "import { assets } from './web-ui/assets.js';",
    "import { endpoint } from './mcp/endpoint.js';",
    "import { labRoutes } from './lab/routes.js';",
    "import { webhookRoutes } from './webhooks/routes.js';",
    "import { faults } from './test-hooks/faults.js';",
    "import { answer } from './providers/answer.js';",
    "import { webhooks } from '../webhooks/service.js';",
    'export const handle = () => ({ checks, mailbox, assets, endpoint, labRoutes, webhookRoutes, faults, answer, webhooks });',
  ].join('\n'),
  'src/server/ui/api.ts': ["import type { Wire } from '../../contract/wire.js';", 'export const read = (wire: Wire) => wire.slug;'].join('\n'),

  // The mail checks, shared by both halves: the client's Mail and the server's route import them.
  'src/checks/check.ts': ["import { slugOf } from '../contract/slug.js';", 'export const checkMail = (html: string) => ({ ok: slugOf(html) !== "" });'].join(
    '\n',
  ),
  'src/inbox/checked.ts': ["import { checkMail } from '../checks/check.js';", 'export const checked = () => checkMail("<p>x</p>");'].join('\n'),
  'src/server/http/checks.ts': ["import { checkMail } from '../../checks/check.js';", 'export const checksRoute = () => checkMail("<p>x</p>");'].join('\n'),

  'src/cli/main.ts': [
    "import { startServer } from '../server/index.js';",
    "import { tools } from '../mcp/tools.js';",
    "import { openInbox } from '../index.js';",
    "import { testInbox } from '../runner/index.js';",
    "import { useInbox } from '../vitest/index.js';",
    'export const main = async () => ({ server: startServer(), tools, inbox: openInbox(), testInbox, useInbox });',
  ].join('\n'),
};
