// `node --import ./record-packages.mjs`: appends the name of every package a
// module of the process resolves to the file named by RECORD_PACKAGES_TO, one
// per line (test/cli/cli.test.ts reads what `mailroom serve` loads to start).
import { register } from 'node:module';
import { URL } from 'node:url';

register(new URL('./record-packages-hooks.mjs', import.meta.url));
