// The layering of src/, enforced by `npm run lint:layers` and by
// test/layout/import-graph.test.ts.
//
// Each illegal import between folders is reported by exactly one rule, the
// most specific: an import of cli/ by `no-import-of-cli`, client side to
// server side by `client-side-not-server`, anything else by the importing
// layer's own `<layer>-layer` rule, and an import between the server's own
// folders by the importing folder's `server-<folder>-layer` rule. A cycle is reported on top, once per
// cycle. A file outside the known folders is reported once, whatever it
// imports.

/**
 * The layers under src/, lowest first. Each may import itself and the layers
 * in `mayImport`; `side` is the half of the package it ships in (the client
 * side must not import the server side); `why` says what the boundary protects.
 */
const LAYERS = {
  contract: {
    side: 'shared',
    mayImport: [],
    why: 'wire types and address rules are the base both halves share, so they depend on nothing',
  },
  checks: {
    side: 'shared',
    mayImport: ['contract'],
    why: "the mail checks run on both halves (a client's mail.check(), the web UI's Checks tab), so they need neither",
  },
  client: {
    side: 'client',
    mayImport: ['contract'],
    why: 'the HTTP client speaks the wire and knows nothing of how callers wait',
  },
  backends: {
    side: 'client',
    mayImport: ['contract', 'client'],
    why: 'a backend (the embedded server, maildev, Mailpit) answers the calls a wait needs and knows nothing of how callers wait',
  },
  wait: {
    side: 'client',
    mayImport: ['contract', 'client', 'backends'],
    why: 'the polling loop drives a backend and knows nothing of inboxes',
  },
  inbox: {
    side: 'client',
    mayImport: ['contract', 'checks', 'client', 'backends', 'wait'],
    why: 'the Inbox composes client and waiting; test runners build on it, not it on them',
  },
  runner: {
    side: 'client',
    mayImport: ['contract', 'checks', 'client', 'backends', 'wait', 'inbox'],
    why: 'the runner-neutral test inbox is what both adapters share, so it needs neither',
  },
  playwright: {
    side: 'client',
    mayImport: ['contract', 'checks', 'client', 'backends', 'wait', 'inbox', 'runner'],
    why: 'an adapter binds one test runner; importing the other adapter drags a second runner in',
  },
  vitest: {
    side: 'client',
    mayImport: ['contract', 'checks', 'client', 'backends', 'wait', 'inbox', 'runner'],
    why: 'an adapter binds one test runner; importing the other adapter drags a second runner in',
  },
  jest: {
    side: 'client',
    mayImport: ['contract', 'checks', 'client', 'backends', 'wait', 'inbox', 'runner'],
    why: 'an adapter binds one test runner; importing the other adapter drags a second runner in',
  },
  mcp: {
    side: 'server',
    mayImport: ['contract'],
    why: 'the MCP tool definitions are shared by the server and the stdio proxy, so they need neither',
  },
  server: {
    side: 'server',
    mayImport: ['contract', 'checks', 'mcp'],
    why: 'the embedded server runs without the client side, so it must not need it',
  },
};

/**
 * The folders inside src/server/, lowest first, by the same rule: each may
 * import itself and its `mayImport`. The shapes several concerns share sit
 * at the bottom (base/); each concern owns its boundary and its in-memory
 * implementation (budgets/, store/, rules/, webhooks/); the Redis
 * implementations of every boundary sit above them all, on one connection
 * (redis/); the HTTP side's route groups stand on its edge, side by side; the
 * files directly in src/server/ (startServer, its options, openStore) compose
 * everything and are imported by none of the folders. `http` is the files
 * directly in src/server/http/: the route table and the handler that sends
 * each request through the edge to its group.
 */
const SERVER_LAYERS = {
  base: {
    mayImport: [],
    why: 'the shapes every concern shares (Awaitable, the clock, the logger, the stored message, the SMTP attempt) are the floor, so they depend on nothing',
  },
  budgets: { mayImport: ['base'], why: 'a per-address budget is counted the same whatever it guards' },
  store: { mayImport: ['base'], why: 'the mail store is the concern the others read; it knows none of them' },
  rules: { mayImport: ['base', 'budgets', 'store'], why: 'the deferral lab reads mail and budgets and is read by SMTP, never the other way' },
  webhooks: { mayImport: ['base', 'store'], why: 'the webhooks hear of mail and attempts; they are told, they do not reach into intake or the lab' },
  waits: { mayImport: ['base', 'budgets', 'store'], why: 'a server-side wait hangs on the store and spends a budget, nothing more' },
  'mail-checks': {
    mayImport: ['base', 'store'],
    why: 'the mail checks run in threads of their own: they parse the message they are handed, and know nothing of who asked',
  },
  smtp: { mayImport: ['base', 'store', 'rules'], why: 'SMTP intake asks the lab and writes the store; it knows nothing of HTTP, Redis or webhooks' },
  providers: {
    mayImport: ['base', 'store', 'rules'],
    why: "the provider APIs' intake is SMTP intake's twin: it asks the lab and writes the store, and knows nothing of HTTP (the dialects are a route group)",
  },
  redis: {
    mayImport: ['base', 'budgets', 'store', 'rules', 'webhooks'],
    why: 'the Redis implementations stand on the boundaries they implement; no concern may know which backend it runs on',
  },
  'http/edge': { mayImport: ['base', 'store'], why: 'the edge every request passes through knows no route group' },
  'http/mailbox': { mayImport: ['base', 'budgets', 'store', 'waits', 'mail-checks', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/web-ui': { mayImport: ['base', 'store', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/mcp': { mayImport: ['base', 'budgets', 'store', 'rules', 'waits', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/lab': { mayImport: ['base', 'budgets', 'store', 'rules', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/webhooks': { mayImport: ['base', 'store', 'webhooks', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/providers': { mayImport: ['base', 'store', 'providers', 'http/edge'], why: 'a route group stands on the edge, beside the others' },
  'http/test-hooks': {
    mayImport: ['base', 'http/edge', 'http/mailbox'],
    why: "the fault switch spoils the mailbox API's answers, so it knows the mailbox calls and nothing else",
  },
  http: {
    mayImport: [
      'base',
      'budgets',
      'store',
      'rules',
      'webhooks',
      'waits',
      'mail-checks',
      'http/edge',
      'http/mailbox',
      'http/web-ui',
      'http/mcp',
      'http/lab',
      'http/webhooks',
      'http/providers',
      'http/test-hooks',
    ],
    why: 'the route table and handler compose the edge and the route groups; SMTP and Redis are not theirs to know',
  },
  ui: { mayImport: [], why: 'the web UI runs in the browser and speaks to the server only over HTTP' },
};

/** The command line sits on top of everything and may import anything. */
const TOP = 'cli';

/** The only file directly in src/: the package's root entry (`mailroomjs`). */
const ROOT_ENTRY = {
  path: '^src/index\\.ts$',
  mayImport: ['contract', 'checks', 'client', 'backends', 'wait', 'inbox'],
  why: '`mailroomjs` is the client core; runners, adapters and the server have their own entries',
};

const FOLDERS = [...Object.keys(LAYERS), TOP];
const CLIENT_SIDE = layersOn('client');
const SERVER_SIDE = layersOn('server');

/** The test runners, by the only folder allowed to import each one's npm packages. */
const TEST_RUNNERS = {
  vitest: ['vitest', '@vitest/[^/]+'],
  playwright: ['@playwright/test', 'playwright', 'playwright-core'],
  jest: ['jest', '@jest/[^/]+', 'jest-[^/]+', 'expect', 'ts-jest', 'babel-jest'],
};

function layersOn(side) {
  return Object.keys(LAYERS).filter((name) => LAYERS[name].side === side);
}

/** Matches any module inside one of the named folders of src/. */
function inFolders(names) {
  return `^src/(${names.join('|')})/`;
}

/**
 * Matches an npm package whether it resolved into node_modules (possibly
 * through a symlink) or could not be resolved and kept its bare name.
 */
function npmPackages(names) {
  const alternatives = names.join('|');
  return [`(^|/)node_modules/(${alternatives})/`, `^(${alternatives})(/|$)`];
}

/**
 * What a layer must not import, leaving out what the rules across the halves
 * and the rule about cli/ already report.
 */
function forbiddenTargets(self, mayImport, isClientSide) {
  const notHere = new Set([self, ...mayImport, TOP, ...(isClientSide ? SERVER_SIDE : [])]);
  const folders = FOLDERS.filter((name) => !notHere.has(name));
  return folders.length > 0 ? [inFolders(folders), ROOT_ENTRY.path] : [ROOT_ENTRY.path];
}

function describeImports(mayImport) {
  return mayImport.length > 0 ? mayImport.map((name) => `${name}/`).join(', ') : 'nothing else';
}

function layerRule(name, { side, mayImport, why }) {
  return {
    name: `${name}-layer`,
    comment: `${why} (${name}/ may import ${describeImports(mayImport)})`,
    severity: 'error',
    from: { path: `^src/${name}/` },
    to: { path: forbiddenTargets(name, mayImport, side === 'client') },
  };
}

function rootEntryRule() {
  return {
    name: 'root-entry-layer',
    comment: `${ROOT_ENTRY.why} (src/index.ts may import ${describeImports(ROOT_ENTRY.mayImport)})`,
    severity: 'error',
    from: { path: ROOT_ENTRY.path },
    to: { path: forbiddenTargets('index.ts', ROOT_ENTRY.mayImport, true) },
  };
}

function testRunnerRule(folder, packages) {
  return {
    name: `only-${folder}-imports-${folder}`,
    comment: `the core knows no test runner: only src/${folder}/ may import ${packages.join(', ')}`,
    severity: 'error',
    from: { path: '^src/', pathNot: `^src/${folder}/` },
    to: { path: npmPackages(packages) },
  };
}

/** The modules of one server folder (`http` alone: the files directly in src/server/http/). */
function serverFolder(name) {
  return name === 'http' ? '^src/server/http/[^/]+$' : `^src/server/${name}/`;
}

/** The files directly in src/server/: the composition on top, which no server folder may import. */
const SERVER_TOP = '^src/server/[^/]+$';

function serverLayerRule(name, { mayImport, why }) {
  const allowed = new Set([name, ...mayImport]);
  const forbidden = Object.keys(SERVER_LAYERS).filter((other) => !allowed.has(other));
  return {
    name: `server-${name.replace('/', '-')}-layer`,
    comment: `${why} (server/${name}/ may import ${mayImport.length > 0 ? mayImport.map((other) => `server/${other}/`).join(', ') : 'nothing else in the server'})`,
    severity: 'error',
    from: { path: serverFolder(name) },
    to: { path: [...forbidden.map(serverFolder), SERVER_TOP] },
  };
}

const SERVER_FOLDERS = Object.keys(SERVER_LAYERS).filter((name) => name !== 'http');
const KNOWN_SERVER_FOLDERS = [
  `^src/server/(${SERVER_FOLDERS.filter((name) => !name.startsWith('http/')).join('|')})/`,
  `^src/server/http/([^/]+$|(${SERVER_FOLDERS.filter((name) => name.startsWith('http/'))
    .map((name) => name.slice('http/'.length))
    .join('|')})/)`,
].join('|');

/**
 * dependency-cruiser has no rule for "this file should not exist", but a
 * `required` rule whose target can never exist fires once for every module it
 * selects, whatever that module imports.
 */
const NOTHING = '$^';

const LAYOUT_RULES = [
  {
    name: 'no-loose-files',
    comment: 'every module lives in its layer folder; src/index.ts is the one file allowed at the top',
    severity: 'error',
    module: { path: '^src/[^/]+$', pathNot: ROOT_ENTRY.path },
    to: { path: NOTHING },
  },
  {
    name: 'no-unknown-folders',
    comment: `a folder the layering does not know escapes every rule; the known ones are ${FOLDERS.join(', ')}`,
    severity: 'error',
    module: { path: '^src/[^/]+/', pathNot: inFolders(FOLDERS) },
    to: { path: NOTHING },
  },
  {
    name: 'no-unknown-server-folders',
    comment: `a server folder the layering does not know escapes the server's rules; the known ones are ${Object.keys(SERVER_LAYERS).join(', ')}`,
    severity: 'error',
    module: { path: ['^src/server/[^/]+/', '^src/server/http/[^/]+/'], pathNot: KNOWN_SERVER_FOLDERS },
    to: { path: NOTHING },
  },
];

const CROSS_RULES = [
  {
    name: 'client-side-not-server',
    comment: 'the client side ships to test processes that never load the server or its MCP tools',
    severity: 'error',
    from: { path: [inFolders(CLIENT_SIDE), ROOT_ENTRY.path] },
    to: { path: inFolders(SERVER_SIDE) },
  },
  {
    name: 'no-import-of-cli',
    comment: 'cli/ is the top of the graph: importing it pulls the whole program into a library',
    severity: 'error',
    from: { path: '^src/', pathNot: inFolders([TOP]) },
    to: { path: inFolders([TOP]) },
  },
];

const GRAPH_RULES = [
  {
    name: 'no-circular',
    comment: 'a cycle makes load order matter and hides which module is the lower one',
    severity: 'error',
    from: { path: '^src/' },
    to: { circular: true },
  },
  {
    name: 'no-unresolvable',
    comment: 'an import the checker cannot resolve is an edge no other rule can see',
    severity: 'error',
    from: { path: '^src/' },
    to: { couldNotResolve: true },
  },
];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  required: LAYOUT_RULES,
  forbidden: [
    ...Object.entries(LAYERS).map(([name, layer]) => layerRule(name, layer)),
    rootEntryRule(),
    ...Object.entries(SERVER_LAYERS).map(([name, layer]) => serverLayerRule(name, layer)),
    ...CROSS_RULES,
    ...Object.entries(TEST_RUNNERS).map(([folder, packages]) => testRunnerRule(folder, packages)),
    ...GRAPH_RULES,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are coupling too, so they are edges like any other.
    tsPreCompilationDeps: true,
    // The parser takes its compiler options (and any `paths`) from here.
    // NodeNext imports ('./foo.js' for ./foo.ts) resolve without help:
    // dependency-cruiser falls back from .js to .ts the way tsc does, which
    // is why the config schema has no place for enhanced-resolve's
    // extensionAlias. The `no-unresolvable` rule fails loudly if that stops.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
