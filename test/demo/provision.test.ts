// The provisioning step of `npm run demo` and `npm test`: what it runs, in
// which order, and what it says when it cannot. The installers here are real
// processes (node) standing in for Playwright's installer and apt-get, which
// a test cannot run; each records its arguments in a log file, and the one
// that "installs" writes the file the need's finder looks for.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { provision, type Apt, type Machine, type Need } from '../../scripts/provisioning.js';
import { findRedisServer } from '../support/redis-server.js';
import { scratchDirs } from '../support/scratch-dirs.js';

const scratchDir = scratchDirs('mailroom-provision-');

/**
 * A program (`dir/<name>.cjs`, run by node) that appends its arguments to
 * `dir/calls`, then exits 0 when it `updates` and is asked to `update`, or
 * says `stderr` and exits with `code`, or with 0 after writing
 * `dir/installed` when it `installs`, or never when it `stalls`.
 */
function fakeInstaller(
  dir: string,
  name: string,
  options: { code?: number; installs?: boolean; stalls?: boolean; stderr?: string; updates?: boolean } = {},
): string[] {
  const path = join(dir, `${name}.cjs`);
  const lines = [
    `require('fs').appendFileSync(${JSON.stringify(join(dir, 'calls'))}, [${JSON.stringify(name)}, ...process.argv.slice(2)].join(' ') + '\\n');`,
    options.updates ? `if (process.argv[2] === 'update') process.exit(0);` : '',
    options.stderr ? `process.stderr.write(${JSON.stringify(options.stderr)});` : '',
    options.installs ? `require('fs').writeFileSync(${JSON.stringify(join(dir, 'installed'))}, '');` : '',
    options.stalls ? 'setInterval(() => {}, 1000);' : `process.exitCode = ${options.code ?? 0};`,
  ];
  writeFileSync(path, lines.join('\n'));
  return [process.execPath, path];
}

/** A need whose program is "installed" once `dir/installed` exists (and is then node itself, which runs `--version`). */
function need(dir: string, playwright?: readonly string[]): Need {
  return {
    name: 'Chromium',
    find: () => {
      if (existsSync(join(dir, 'installed'))) return process.execPath;
      throw new Error('No Chromium found for the e2e tests.\nInstall one of them: ...');
    },
    override: 'MAILROOM_CHROMIUM',
    ...(playwright ? { playwright } : {}),
    debian: { required: ['chromium'], optional: ['chromium-headless-shell', 'not-in-the-lists'] },
  };
}

function machine(apt: Apt, env: Record<string, string> = {}, canDownload = true): Machine & { readonly lines: string[] } {
  const lines: string[] = [];
  return { env, apt, stallMs: 2_000, log: (line) => lines.push(line), lines, canDownload: () => Promise.resolve(canDownload) };
}

const calls = (dir: string) => (existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n') : []);
const knowsAllBut = (pkg: string) => (name: string) => name !== pkg;

test('runs nothing when the program is there', async () => {
  const dir = scratchDir();
  const installer = fakeInstaller(dir, 'installer', { installs: true });
  const at = machine({ command: installer, hasLists: () => true, knows: () => true });
  const found = await provision([{ ...need(dir, installer), find: () => process.execPath }], at);
  expect([...found.values()]).toEqual([process.execPath]);
  expect(at.lines).toEqual([`provision: Chromium ${process.execPath}`]);
  expect(calls(dir)).toEqual([]);
});

test("says what it runs before it runs it, and falls back to Debian's packages when Playwright's installer stalls", async () => {
  const dir = scratchDir();
  const playwright = fakeInstaller(dir, 'playwright', { stalls: true });
  const apt = fakeInstaller(dir, 'apt-get', { installs: true });
  const at = machine({ command: apt, hasLists: () => true, knows: knowsAllBut('not-in-the-lists') });
  const found = await provision([need(dir, playwright)], at);
  expect([...found.values()]).toEqual([process.execPath]);
  expect(calls(dir)).toEqual(['playwright', 'apt-get install -y chromium chromium-headless-shell']);
  const shown = (command: readonly string[]) => `\`${command.join(' ')}\``;
  expect(at.lines[0]).toBe('provision: no Chromium found; installing it.');
  expect(at.lines[1]).toBe(`provision: running ${shown(playwright)}`);
  expect(at.lines[2]).toMatch(/^provision: `.+` failed after [\d.]+ s: printed nothing for 2 s and was stopped$/);
  expect(at.lines[3]).toBe("provision: installing Debian's packages for Chromium.");
  expect(at.lines[4]).toBe(`provision: running ${shown([...apt, 'install', '-y', 'chromium', 'chromium-headless-shell'])}`);
  expect(at.lines.at(-1)).toBe(`provision: Chromium ${process.execPath}`);
});

test("does not try Playwright's installer where its download host does not resolve: Debian's packages at once, and why", async () => {
  const dir = scratchDir();
  const playwright = fakeInstaller(dir, 'playwright', { installs: true });
  const apt = fakeInstaller(dir, 'apt-get', { installs: true });
  const at = machine({ command: apt, hasLists: () => true, knows: knowsAllBut('not-in-the-lists') }, {}, false);
  expect([...(await provision([need(dir, playwright)], at)).values()]).toEqual([process.execPath]);
  expect(calls(dir)).toEqual(['apt-get install -y chromium chromium-headless-shell']);
  expect(at.lines[1]).toBe(`provision: \`${playwright.join(' ')}\` not tried: cdn.playwright.dev does not resolve from here (no downloads)`);
});

test('refreshes missing package lists first, and a failed install names the command, its exit and its error', async () => {
  const dir = scratchDir();
  const apt = fakeInstaller(dir, 'apt-get', { code: 100, stderr: 'Reading package lists...\nE: Unable to locate package chromium\n' });
  const at = machine({ command: apt, hasLists: () => false, knows: () => false });
  const failure = provision([need(dir)], at);
  await expect(failure).rejects.toThrow(
    /^No Chromium found for the e2e tests\.\nInstall one of them: \.\.\.\nInstalling it failed:\n {2}- `.+ update` exited with code 100: E: Unable to locate package chromium$/,
  );
  expect(calls(dir)).toEqual(['apt-get update']);
});

test('retries an install that fails after refreshing the lists, and says when that fails too', async () => {
  const dir = scratchDir();
  const apt = fakeInstaller(dir, 'apt-get', { code: 100, updates: true, stderr: 'E: Package chromium has no installation candidate\n' });
  const at = machine({ command: apt, hasLists: () => true, knows: () => true });
  await expect(provision([need(dir)], at)).rejects.toThrow(
    /Installing it failed:\n {2}- `.+ install -y chromium chromium-headless-shell not-in-the-lists` exited with code 100: E: Package chromium has no installation candidate$/,
  );
  expect(calls(dir)).toEqual([
    'apt-get install -y chromium chromium-headless-shell not-in-the-lists',
    'apt-get update',
    'apt-get install -y chromium chromium-headless-shell not-in-the-lists',
  ]);
});

test('with MAILROOM_NO_INSTALL=1, or where it may not install, it stops with the advice', async () => {
  const dir = scratchDir();
  const installer = fakeInstaller(dir, 'installer', { installs: true });
  const off = machine({ command: installer, hasLists: () => true, knows: () => true }, { MAILROOM_NO_INSTALL: '1' });
  await expect(provision([need(dir, installer)], off)).rejects.toThrow(
    'No Chromium found for the e2e tests.\nInstall one of them: ...\nInstalling is off (MAILROOM_NO_INSTALL=1), so nothing was installed.',
  );
  const chosen = machine({ command: installer, hasLists: () => true, knows: () => true }, { MAILROOM_CHROMIUM: '/nowhere/chromium' });
  await expect(provision([need(dir, installer)], chosen)).rejects.toThrow(/^No Chromium found for the e2e tests\.\nInstall one of them: \.\.\.$/);
  expect(calls(dir)).toEqual([]);

  const playwright = fakeInstaller(dir, 'playwright', { code: 1, stderr: 'Error: getaddrinfo ENOTFOUND cdn.playwright.dev\n' });
  const notRoot = machine({ unavailable: 'this user is not root, and sudo asks for a password (or is not installed)' });
  await expect(provision([need(dir, playwright)], notRoot)).rejects.toThrow(
    /Install one of them: \.\.\.\nInstalling it failed:\n {2}- `.+` exited with code 1: Error: getaddrinfo ENOTFOUND cdn\.playwright\.dev\n {2}- Debian's packages \(chromium\): this user is not root, and sudo asks for a password \(or is not installed\)$/,
  );
});

test('finds redis-server as the Redis tests start it: MAILROOM_REDIS_SERVER, else on PATH, else says what to install', () => {
  const dir = scratchDir();
  const program = join(dir, 'redis-server');
  writeFileSync(program, '#!/bin/sh\n', { mode: 0o755 });
  expect(findRedisServer({ PATH: `/nowhere:${dir}` })).toBe(program);
  expect(findRedisServer({ PATH: '/nowhere', MAILROOM_REDIS_SERVER: program })).toBe(program);
  expect(() => findRedisServer({ PATH: '/nowhere' })).toThrow(
    "No redis-server found for the Redis store's tests. Looked at:\n  - MAILROOM_REDIS_SERVER (not set)\n  - redis-server on PATH (missing)\nInstall it:\n  - Debian/Ubuntu: sudo apt-get install -y redis-server",
  );
  expect(() => findRedisServer({ PATH: dir, MAILROOM_REDIS_SERVER: '/nowhere/redis-server' })).toThrow(
    'MAILROOM_REDIS_SERVER is set to /nowhere/redis-server, but no such program is there.',
  );
});
