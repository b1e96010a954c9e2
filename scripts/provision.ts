// `tsx scripts/provision.ts chromium [redis-server]`: the first step of
// `npm run demo` (Chromium) and `npm test` (Chromium and redis-server), and
// so of `.ci/run`: finds what the run needs, installs what is missing, or
// stops with what to install by hand (scripts/provisioning.ts says how).
import { NEEDS, provision, ProvisionError, type NeedName } from './provisioning.js';

const names = process.argv.slice(2);
const known = Object.keys(NEEDS);
const unknown = names.filter((name) => !known.includes(name));
if (names.length === 0 || unknown.length > 0) {
  console.error(`provision: ${names.length === 0 ? 'name what to provide' : `unknown ${unknown.join(', ')}`}; the choices are ${known.join(', ')}`);
  process.exit(2);
}

try {
  await provision(names.map((name) => NEEDS[name as NeedName]));
} catch (error) {
  if (!(error instanceof ProvisionError)) throw error;
  console.error(`provision: ${error.message}`);
  console.error('Install what is missing as above, then run the command again.');
  process.exit(1);
}
