// The module hooks of record-packages.mjs; they run on the loader's thread.
import { appendFileSync } from 'node:fs';
import process from 'node:process';

const PACKAGE = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//;

export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const name = PACKAGE.exec(resolved.url)?.[1];
  if (name && process.env.RECORD_PACKAGES_TO) appendFileSync(process.env.RECORD_PACKAGES_TO, `${name}\n`);
  return resolved;
}
