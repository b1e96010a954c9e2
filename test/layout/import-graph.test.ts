// The layering of src/ (one folder per layer, see .dependency-cruiser.mjs),
// checked on the import graph dependency-cruiser reads. The planted cases
// prove each rule fires on exactly the import that breaks it; the legal tree
// proves the rules forbid nothing the layering allows.
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, copyOfRealSrc, cruiseTree, edgesOf, plant, removeTrees, report, ruleNames, treeOf, violationsOf } from './support/import-graph.js';
import { LEGAL_TREE } from './support/legal-tree.js';

afterAll(removeTrees);

async function violationsIn(root: string): Promise<string[]> {
  return violationsOf(await cruiseTree(root));
}

// The real tree is read once for the two tests that need it: each read of
// all of src/ costs 2-3 CPU s.
let realTree: Promise<string[]> | undefined;
const violationsInRealSrc = (): Promise<string[]> => (realTree ??= violationsIn(REPO_ROOT));

async function legalTreeWith(lines: Readonly<Record<string, string>>): Promise<string> {
  const root = await treeOf(LEGAL_TREE);
  await plant(root, lines);
  return root;
}

describe('the import graph of src/', () => {
  it('keeps every layering rule', async () => {
    const violations = await violationsInRealSrc();
    expect(violations, report(violations)).toEqual([]);
  });
});

describe('the layering rules', () => {
  it('find nothing wrong with a tree that imports only what the layering allows', async () => {
    const violations = await violationsIn(await treeOf(LEGAL_TREE));
    expect(violations, report(violations)).toEqual([]);
  });

  it("resolve NodeNext '.js' imports to the .ts sources, type-only imports included", async () => {
    const edges = edgesOf(await cruiseTree(await treeOf(LEGAL_TREE)));
    expect(edges).toContain('src/inbox/inbox.ts -> src/wait/poll.ts');
    expect(edges).toContain('src/contract/wire.ts -> src/contract/slug.ts');
    expect(edges).toContain('src/server/store/store.ts -> src/contract/wire.ts');
    expect(edges).toContain('src/server/http/checks.ts -> src/checks/check.ts');
  });

  it('catch imports planted in a copy of the real src/, a server back-arrow by its folder, and nothing else new', async () => {
    const before = await violationsInRealSrc();
    const root = await copyOfRealSrc();
    await plant(root, {
      'src/server/planted.ts': "export { } from '../index.js';",
      // The arrow the server had before its folders were layered: the store reaching up into the deferral lab.
      'src/server/store/planted.ts': "import type { LabStore } from '../rules/lab-store.js';",
    });

    const added = (await violationsIn(root)).filter((line) => !before.includes(line));
    expect(added, report(added)).toEqual([
      'server-layer: src/server/planted.ts -> src/index.ts',
      'server-store-layer: src/server/store/planted.ts -> src/server/rules/lab-store.ts',
    ]);
  });

  // One back-arrow out of each server folder (and two folders the layering
  // does not know), planted together in new files nothing imports, so no
  // cycle hides one; each must come back under its own folder's rule.
  const serverBackArrows: { lines: Record<string, string>; expected: string[] } = {
    lines: {
      'src/server/base/planted.ts': "import { store } from '../store/store.js';",
      'src/server/budgets/planted.ts': "import { count } from '../store/store.js';",
      'src/server/store/planted.ts': "import { lab } from '../rules/lab.js';",
      'src/server/rules/planted.ts': "import { listen } from '../smtp/listen.js';",
      'src/server/webhooks/planted.ts': "import { lab } from '../rules/lab.js';",
      'src/server/waits/planted.ts': "import { webhooks } from '../webhooks/service.js';",
      'src/server/mail-checks/planted.ts': "import { hold } from '../waits/hold.js';",
      'src/server/smtp/planted.ts': "import { startServer } from '../index.js';",
      'src/server/providers/planted.ts': "import { answer } from '../http/providers/answer.js';",
      'src/server/http/providers/planted.ts': "import { webhooks } from '../../webhooks/service.js';",
      'src/server/redis/planted.ts': "import { listen } from '../smtp/listen.js';",
      'src/server/http/edge/planted.ts': "import { mailbox } from '../mailbox/routes.js';",
      'src/server/http/mailbox/planted.ts': "import { assets } from '../web-ui/assets.js';",
      'src/server/http/web-ui/planted.ts': "import { endpoint } from '../mcp/endpoint.js';",
      'src/server/http/mcp/planted.ts': "import { labRoutes } from '../lab/routes.js';",
      'src/server/http/lab/planted.ts': "import { webhookRoutes } from '../webhooks/routes.js';",
      'src/server/http/webhooks/planted.ts': "import { faults } from '../test-hooks/faults.js';",
      'src/server/http/test-hooks/planted.ts': "import { handle } from '../api.js';",
      'src/server/http/planted.ts': "import { RedisStore } from '../redis/redis-store.js';",
      'src/server/ui/planted.ts': "import { store } from '../store/store.js';",
      'src/server/helpers/strings.ts': 'export const helper = 1;',
      'src/server/http/auth/token.ts': "import { checks } from '../edge/checks.js';",
    },
    expected: [
      'no-unknown-server-folders: src/server/helpers/strings.ts',
      'no-unknown-server-folders: src/server/http/auth/token.ts',
      'server-base-layer: src/server/base/planted.ts -> src/server/store/store.ts',
      'server-budgets-layer: src/server/budgets/planted.ts -> src/server/store/store.ts',
      'server-http-edge-layer: src/server/http/edge/planted.ts -> src/server/http/mailbox/routes.ts',
      'server-http-lab-layer: src/server/http/lab/planted.ts -> src/server/http/webhooks/routes.ts',
      'server-http-layer: src/server/http/planted.ts -> src/server/redis/redis-store.ts',
      'server-http-mailbox-layer: src/server/http/mailbox/planted.ts -> src/server/http/web-ui/assets.ts',
      'server-http-mcp-layer: src/server/http/mcp/planted.ts -> src/server/http/lab/routes.ts',
      'server-http-providers-layer: src/server/http/providers/planted.ts -> src/server/webhooks/service.ts',
      'server-http-test-hooks-layer: src/server/http/test-hooks/planted.ts -> src/server/http/api.ts',
      'server-http-web-ui-layer: src/server/http/web-ui/planted.ts -> src/server/http/mcp/endpoint.ts',
      'server-http-webhooks-layer: src/server/http/webhooks/planted.ts -> src/server/http/test-hooks/faults.ts',
      'server-mail-checks-layer: src/server/mail-checks/planted.ts -> src/server/waits/hold.ts',
      'server-providers-layer: src/server/providers/planted.ts -> src/server/http/providers/answer.ts',
      'server-redis-layer: src/server/redis/planted.ts -> src/server/smtp/listen.ts',
      'server-rules-layer: src/server/rules/planted.ts -> src/server/smtp/listen.ts',
      'server-smtp-layer: src/server/smtp/planted.ts -> src/server/index.ts',
      'server-store-layer: src/server/store/planted.ts -> src/server/rules/lab.ts',
      'server-ui-layer: src/server/ui/planted.ts -> src/server/store/store.ts',
      'server-waits-layer: src/server/waits/planted.ts -> src/server/webhooks/service.ts',
      'server-webhooks-layer: src/server/webhooks/planted.ts -> src/server/rules/lab.ts',
    ],
  };

  it('catch a back-arrow out of each server folder, each by its own rule', async () => {
    const violations = await violationsIn(await legalTreeWith(serverBackArrows.lines));
    expect(violations, report(violations)).toEqual(serverBackArrows.expected);
  });

  // Each case appends lines to the legal tree (creating the file if need be)
  // and names every violation that must follow, no more.
  const planted: { case: string; lines: Record<string, string>; expected: string[] }[] = [
    {
      case: 'the server importing the inbox',
      lines: { 'src/server/index.ts': "import { openInbox } from '../inbox/inbox.js';" },
      expected: ['server-layer: src/server/index.ts -> src/inbox/inbox.ts'],
    },
    {
      case: 'the client side importing the server, by a type-only import',
      lines: { 'src/client/client.ts': "import type { startServer } from '../server/index.js';" },
      expected: ['client-side-not-server: src/client/client.ts -> src/server/index.ts'],
    },
    {
      case: 'the client side loading the MCP tools with a dynamic import',
      lines: { 'src/runner/index.ts': "export const load = () => import('../mcp/tools.js');" },
      expected: ['client-side-not-server: src/runner/index.ts -> src/mcp/tools.ts'],
    },
    {
      case: 'the core importing vitest',
      lines: { 'src/inbox/inbox.ts': "import { expect } from 'vitest';" },
      expected: ['only-vitest-imports-vitest: src/inbox/inbox.ts -> node_modules/vitest/dist/index.d.ts'],
    },
    {
      case: "the runner-neutral layer importing Jest's globals",
      lines: { 'src/runner/index.ts': "import { expect } from '@jest/globals';" },
      expected: ['only-jest-imports-jest: src/runner/index.ts -> node_modules/@jest/globals/build/index.d.ts'],
    },
    {
      case: 'the Jest adapter importing the Vitest one',
      lines: { 'src/jest/planted.ts': "import { useInbox } from '../vitest/index.js';" },
      expected: ['jest-layer: src/jest/planted.ts -> src/vitest/index.ts'],
    },
    {
      case: 'the runner-neutral layer importing Playwright types',
      lines: { 'src/runner/index.ts': "import type { Page } from '@playwright/test';" },
      expected: ['only-playwright-imports-playwright: src/runner/index.ts -> node_modules/@playwright/test/index.d.ts'],
    },
    {
      case: 'one adapter importing the other',
      lines: { 'src/playwright/index.ts': "import { useInbox } from '../vitest/index.js';" },
      expected: ['playwright-layer: src/playwright/index.ts -> src/vitest/index.ts'],
    },
    {
      case: 'a cycle inside one layer',
      lines: { 'src/inbox/mail.ts': "import { openInbox } from './inbox.js';" },
      expected: ['no-circular: src/inbox/inbox.ts -> src/inbox/mail.ts -> src/inbox/inbox.ts'],
    },
    {
      case: 'the contract importing the client',
      lines: { 'src/contract/planted.ts': "import { MailroomClient } from '../client/client.js';" },
      expected: ['contract-layer: src/contract/planted.ts -> src/client/client.ts'],
    },
    {
      case: 'the mail checks importing the inbox',
      lines: { 'src/checks/planted.ts': "import type { Mail } from '../inbox/mail.js';" },
      expected: ['checks-layer: src/checks/planted.ts -> src/inbox/mail.ts'],
    },
    {
      case: 'the client importing the wait layer above it',
      lines: { 'src/client/planted.ts': "import { poll } from '../wait/poll.js';" },
      expected: ['client-layer: src/client/planted.ts -> src/wait/poll.ts'],
    },
    {
      case: 'a backend importing the wait layer above it',
      lines: { 'src/backends/planted.ts': "import { poll } from '../wait/poll.js';" },
      expected: ['backends-layer: src/backends/planted.ts -> src/wait/poll.ts'],
    },
    {
      case: 'the wait layer importing the inbox above it',
      lines: { 'src/wait/planted.ts': "import type { Mail } from '../inbox/mail.js';" },
      expected: ['wait-layer: src/wait/planted.ts -> src/inbox/mail.ts'],
    },
    {
      case: 'the inbox importing the runner layer above it',
      lines: { 'src/inbox/planted.ts': "export { testInbox } from '../runner/index.js';" },
      expected: ['inbox-layer: src/inbox/planted.ts -> src/runner/index.ts'],
    },
    {
      case: 'the runner-neutral layer importing an adapter',
      lines: { 'src/runner/planted.ts': "import { fixtures } from '../playwright/index.js';" },
      expected: ['runner-layer: src/runner/planted.ts -> src/playwright/index.ts'],
    },
    {
      case: 'the vitest adapter importing the root entry',
      lines: { 'src/vitest/planted.ts': "import { openInbox } from '../index.js';" },
      expected: ['vitest-layer: src/vitest/planted.ts -> src/index.ts'],
    },
    {
      case: 'the MCP tools importing the server',
      lines: { 'src/mcp/planted.ts': "import { startServer } from '../server/index.js';" },
      expected: ['mcp-layer: src/mcp/planted.ts -> src/server/index.ts'],
    },
    {
      case: 'the root entry exporting the runner',
      lines: { 'src/index.ts': "export { testInbox } from './runner/index.js';" },
      expected: ['root-entry-layer: src/index.ts -> src/runner/index.ts'],
    },
    {
      case: 'the server importing cli/',
      lines: { 'src/server/http/planted.ts': "import { main } from '../../cli/main.js';" },
      expected: ['no-import-of-cli: src/server/http/planted.ts -> src/cli/main.ts'],
    },
    {
      case: 'a loose file at the top of src/',
      lines: { 'src/helpers.ts': 'export const helper = 1;' },
      expected: ['no-loose-files: src/helpers.ts'],
    },
    {
      case: 'a folder the layering does not know',
      lines: { 'src/utils/strings.ts': "import { slugOf } from '../contract/slug.js';" },
      expected: ['no-unknown-folders: src/utils/strings.ts'],
    },
    {
      case: 'an import that resolves to nothing',
      lines: { 'src/wait/clock.ts': "import { gone } from './missing.js';" },
      expected: ['no-unresolvable: src/wait/clock.ts -> ./missing.js'],
    },
  ];

  it.each(planted)('catch $case', async ({ lines, expected }) => {
    const violations = await violationsIn(await legalTreeWith(lines));
    expect(violations, report(violations)).toEqual(expected);
  });

  it('each have a planted case, so none can silently stop firing', async () => {
    const caught = new Set([...planted, serverBackArrows].flatMap(({ expected }) => expected.map((line) => line.split(':')[0])));
    const untested = (await ruleNames()).filter((name) => !caught.has(name));
    expect(untested).toEqual([]);
  });
});
