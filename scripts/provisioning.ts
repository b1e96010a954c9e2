// What `npm run demo` and `npm test` need beyond npm's packages, found as
// the runs find them or else installed, so that the README's two commands
// work on a bare machine: Chromium for the e2e specs (both commands) and
// redis-server for the Redis store's tests (`npm test`). `.ci/run` runs
// `npm test`, so a fresh CI machine is provisioned the same way.
//
// A missing program is installed the way its users expect, each command
// printed before it runs: Playwright's own installer first where it has one
// (it needs downloads, and fails fast without them: no DNS, no route), then
// the distribution's packages (Debian's apt-get) where this user is root or
// has password-less sudo, refreshing the package lists when there are none
// or the install fails without them. Where neither works, the run stops
// with the finder's advice (what to install by hand), and a failed command
// is named with its exit and its last words. `MAILROOM_NO_INSTALL=1` turns
// installing off: the run stops with the advice instead.
import { lookup } from 'node:dns/promises';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { findChromium } from '../e2e/chromium.js';
import { findRedisServer } from '../test/support/redis-server.js';

/** A program a command needs, how it is found, and how it may be installed. */
export interface Need {
  /** As the messages name it: `Chromium`, `redis-server`. */
  readonly name: string;
  /** Its path; throws an error that says where it looked and what to install. */
  readonly find: () => string;
  /** The variable that names one explicitly: when set, it is what the user wants, and nothing is installed instead. */
  readonly override: string;
  /** Playwright's installer for it, when Playwright has one. */
  readonly playwright?: readonly string[];
  /** The distribution's packages: `required` must install; `optional` ones go along where the package lists know them. */
  readonly debian: { readonly required: readonly string[]; readonly optional?: readonly string[] };
}

export const NEEDS = {
  chromium: {
    name: 'Chromium',
    find: () => findChromium(),
    override: 'MAILROOM_CHROMIUM',
    playwright: ['npx', 'playwright', 'install', 'chromium'],
    // The headless shell is what the e2e specs launch first (e2e/chromium.ts: about half the CPU of the full browser).
    debian: { required: ['chromium'], optional: ['chromium-headless-shell'] },
  },
  'redis-server': {
    name: 'redis-server',
    find: () => findRedisServer(),
    override: 'MAILROOM_REDIS_SERVER',
    debian: { required: ['redis-server'] },
  },
} as const satisfies Record<string, Need>;

export type NeedName = keyof typeof NEEDS;

/** How apt-get is run here, or why it cannot be. */
export type Apt =
  | {
      /** apt-get as root: `apt-get`, or `sudo -n env DEBIAN_FRONTEND=noninteractive apt-get`. */
      readonly command: readonly string[];
      /** Whether the package lists are there (a fresh image often has none). */
      readonly hasLists: () => boolean;
      /** Whether the lists know a package. */
      readonly knows: (pkg: string) => boolean;
    }
  | { readonly unavailable: string };

/** The machine as provisioning sees it; tests replace parts. */
export interface Machine {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly apt: Apt;
  /** An installer that prints nothing for this long is stopped (a download that hangs instead of failing). */
  readonly stallMs: number;
  /** Where progress goes, a line at a time; the installers' own output goes to stdout as it comes. */
  readonly log: (line: string) => void;
  /**
   * Whether Playwright's download host resolves: where it does not (a
   * machine with no way out, as CI's here), its installer would spend ten
   * seconds failing, and is not tried.
   */
  readonly canDownload: () => Promise<boolean>;
}

/** A stop: the message says what was missing, what was tried, and what to do by hand. */
export class ProvisionError extends Error {
  override name = 'ProvisionError';
}

/** Three minutes of silence: apt-get waits up to 120 s for another apt's lock, and says so once. */
const STALL_MS = 180_000;
/** Playwright's per-connection timeout (its default is 30 s, for each of its five attempts), unless the user set one. */
const PLAYWRIGHT_CONNECTION_TIMEOUT_MS = '10000';

/** This machine: root or password-less sudo for apt-get, when there is an apt-get. */
export function thisMachine(env: Readonly<Record<string, string | undefined>> = process.env): Machine {
  return { env, apt: aptHere(), stallMs: STALL_MS, log: (line) => console.log(line), canDownload: () => resolves(playwrightHost(env)) };
}

/** The host Playwright downloads browsers from (`PLAYWRIGHT_DOWNLOAD_HOST` moves it). */
function playwrightHost(env: Readonly<Record<string, string | undefined>>): string {
  const given = env.PLAYWRIGHT_DOWNLOAD_HOST?.trim();
  if (!given) return 'cdn.playwright.dev';
  try {
    return new URL(given.includes('://') ? given : `https://${given}`).hostname;
  } catch {
    return given;
  }
}

/** Whether `host` resolves within 3 s. */
function resolves(host: string): Promise<boolean> {
  return Promise.race([
    lookup(host).then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3_000).unref()),
  ]);
}

function aptHere(): Apt {
  if (!onPath('apt-get')) return { unavailable: 'there is no apt-get here' };
  let asRoot: string[];
  if (process.getuid?.() === 0) asRoot = [];
  else if (onPath('sudo') && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0)
    asRoot = ['sudo', '-n', 'env', 'DEBIAN_FRONTEND=noninteractive'];
  else return { unavailable: 'this user is not root, and sudo asks for a password (or is not installed)' };
  return {
    // Another apt (unattended upgrades on a fresh CI machine) may hold the lock for a while: wait for it, not fail.
    command: [...asRoot, 'apt-get', '-o', 'DPkg::Lock::Timeout=120'],
    hasLists: () => {
      try {
        return readdirSync('/var/lib/apt/lists').some((file) => file.includes('_Packages'));
      } catch {
        return false;
      }
    },
    knows: (pkg) => spawnSync('apt-cache', ['show', '--no-all-versions', pkg], { stdio: 'ignore' }).status === 0,
  };
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(`${dir}/${command}`));
}

/**
 * Finds each need, installing the missing ones; returns each one's path.
 * Throws a ProvisionError when one is still missing.
 */
export async function provision(needs: readonly Need[], machine: Machine = thisMachine()): Promise<Map<Need, string>> {
  const found = new Map<Need, string>();
  const missing: { need: Need; why: string }[] = [];
  for (const need of needs) {
    try {
      found.set(need, need.find());
    } catch (error) {
      missing.push({ need, why: (error as Error).message });
    }
  }
  if (missing.length === 0) {
    machine.log(`provision: ${needs.map((need) => `${need.name} ${found.get(need)}`).join(', ')}`);
    return found;
  }

  const chosen = missing.filter(({ need }) => machine.env[need.override]);
  if (chosen.length > 0) throw new ProvisionError(chosen.map(({ why }) => why).join('\n'));
  const off = machine.env.MAILROOM_NO_INSTALL;
  if (off && off !== '0') {
    throw new ProvisionError([...missing.map(({ why }) => why), 'Installing is off (MAILROOM_NO_INSTALL=1), so nothing was installed.'].join('\n'));
  }

  const failures: string[] = [];
  const stillMissing: Need[] = [];
  for (const { need } of missing) {
    machine.log(`provision: no ${need.name} found; installing it.`);
    const downloads = need.playwright !== undefined && (await machine.canDownload());
    if (need.playwright && !downloads) {
      const skipped = `\`${need.playwright.join(' ')}\` not tried: ${playwrightHost(machine.env)} does not resolve from here (no downloads)`;
      machine.log(`provision: ${skipped}`);
      failures.push(skipped);
    }
    if (
      need.playwright &&
      downloads &&
      (await installWith(need.playwright, machine, failures, { PLAYWRIGHT_DOWNLOAD_CONNECTION_TIMEOUT: PLAYWRIGHT_CONNECTION_TIMEOUT_MS }))
    ) {
      const path = findAfterInstall(need, failures);
      if (path) {
        found.set(need, path);
        continue;
      }
    }
    stillMissing.push(need);
  }
  if (stillMissing.length > 0) await installFromDebian(stillMissing, machine, failures);
  for (const need of stillMissing) {
    const path = findAfterInstall(need, failures);
    if (path) found.set(need, path);
  }

  const left = needs.filter((need) => !found.has(need));
  if (left.length > 0) {
    throw new ProvisionError(
      [
        ...left.map((need) => missing.find((m) => m.need === need)!.why),
        failures.length > 0 ? 'Installing it failed:' : '',
        ...failures.map((failure) => `  - ${failure}`),
      ]
        .filter(Boolean)
        .join('\n'),
    );
  }
  machine.log(`provision: ${needs.map((need) => `${need.name} ${found.get(need)}`).join(', ')}`);
  return found;
}

/** The need's path once installed, when it also runs (`--version`): a downloaded browser may lack the system's libraries. */
function findAfterInstall(need: Need, failures: string[]): string | undefined {
  let path: string;
  try {
    path = need.find();
  } catch {
    return undefined;
  }
  const ran = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (ran.status === 0) return path;
  const said = lastWords(`${ran.stderr ?? ''}\n${ran.error ? String(ran.error) : ''}`);
  failures.push(
    `${need.name} is installed at ${path} but does not start (\`${path} --version\`: ${said || `exit code ${ran.status}`})` +
      (need.playwright ? '; Playwright installs the libraries it needs with `sudo npx playwright install-deps chromium`' : ''),
  );
  return undefined;
}

/** apt-get install of every need's packages in one command, the lists refreshed first when there are none, or after a failed try. */
async function installFromDebian(needs: readonly Need[], machine: Machine, failures: string[]): Promise<void> {
  const { apt } = machine;
  if ('unavailable' in apt) {
    failures.push(`Debian's packages (${needs.flatMap((need) => need.debian.required).join(', ')}): ${apt.unavailable}`);
    return;
  }
  let updated = false;
  if (!apt.hasLists()) {
    machine.log('provision: the package lists are missing; refreshing them first.');
    if (!(await installWith([...apt.command, 'update'], machine, failures))) return;
    updated = true;
  }
  machine.log(`provision: installing Debian's packages for ${needs.map((need) => need.name).join(' and ')}.`);
  const packages = needs.flatMap((need) => [...need.debian.required, ...(need.debian.optional ?? []).filter((pkg) => apt.knows(pkg))]);
  const install = [...apt.command, 'install', '-y', ...packages];
  if (await installWith(install, machine, updated ? failures : [])) return;
  if (updated) return;
  machine.log('provision: retrying after refreshing the package lists.');
  if (await installWith([...apt.command, 'update'], machine, failures)) await installWith(install, machine, failures);
}

/**
 * Runs one install command, printing it first and its output as it comes;
 * true when it succeeded, else a line naming it and how it failed goes to `failures`.
 */
async function installWith(command: readonly string[], machine: Machine, failures: string[], extraEnv: Record<string, string> = {}): Promise<boolean> {
  const shown = command.join(' ');
  machine.log(`provision: running \`${shown}\``);
  const started = performance.now();
  const env: NodeJS.ProcessEnv = { ...process.env, ...machine.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const [name, value] of Object.entries(extraEnv)) env[name] ??= value;
  const failure = await runCommand(command, env, machine.stallMs);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (failure === undefined) {
    machine.log(`provision: \`${shown}\` done in ${seconds} s`);
    return true;
  }
  machine.log(`provision: \`${shown}\` failed after ${seconds} s: ${failure}`);
  failures.push(`\`${shown}\` ${failure}`);
  return false;
}

/**
 * Runs a command in a process group of its own (npx and apt-get start
 * children, and a stop must stop them all); resolves to undefined when it
 * exited 0, else to how it failed, with its last words on stderr.
 */
function runCommand(command: readonly string[], env: NodeJS.ProcessEnv, stallMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stderr = '';
    let stalled = false;
    let interrupted: NodeJS.Signals | undefined;
    const stop = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // already gone
      }
    };
    const watch = () => setTimeout(() => ((stalled = true), stop('SIGKILL')), stallMs);
    let timer = watch();
    const heard = () => {
      clearTimeout(timer);
      timer = watch();
    };
    // Ctrl-C reaches this process only (the installer has a group of its own): pass it on, then stop as it would have.
    const forward = (signal: NodeJS.Signals) => {
      interrupted = signal;
      stop(signal);
    };
    process.once('SIGINT', forward).once('SIGTERM', forward);
    child.stdout.on('data', (chunk: Buffer) => {
      heard();
      process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      heard();
      stderr += chunk.toString();
    });
    const done = (failure: string | undefined) => {
      clearTimeout(timer);
      process.off('SIGINT', forward).off('SIGTERM', forward);
      if (interrupted) process.kill(process.pid, interrupted);
      else resolve(failure);
    };
    child.once('error', (error) => done(`could not start: ${error.message}`));
    child.once('close', (code, signal) => {
      if (code === 0) return done(undefined);
      const how = stalled ? `printed nothing for ${stallMs / 1000} s and was stopped` : signal ? `ended with ${signal}` : `exited with code ${code}`;
      const said = lastWords(stderr);
      done(said ? `${how}: ${said}` : how);
    });
  });
}

/**
 * The error lines of an installer's stderr (`E: ...` from apt-get, `Error: ...`
 * from Node), else its last lines, joined with ` / `: enough to say why, in one line.
 */
function lastWords(text: string): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const errors = [...new Set(lines.filter((line) => /^(E:|Error\b|error\b)/.test(line)))];
  return (errors.length > 0 ? errors : lines).slice(-3).join(' / ');
}
