// The Redis implementations' Lua scripts, one file per script in scripts/
// (store.lua, budget.lua, lab.lua, webhook.lua), loaded by name as BullMQ
// loads its commands: each is read and reviewed as Lua, with its key layout
// at its top, not as a string inside TypeScript. The build copies them into
// dist/ beside this module (package.json `build`); a module that runs one
// reads it once, when it is loaded, and the connection sends it by its SHA
// (redis-connection.ts `script`).
//
// A part two scripts share (the attempt log's writes, which the lab's script
// and the store's both make) is a file of its own, put in place of a line
// `-- include: <file>.lua` (a script cannot call another inside Redis).
import { readFileSync } from 'node:fs';

export type LuaScriptName = 'store' | 'budget' | 'lab' | 'webhook';

const INCLUDE = /^-- include: ([a-z-]+\.lua)$/gm;

const read = (file: string) => readFileSync(new URL(`./scripts/${file}`, import.meta.url), 'utf8');

export function luaScript(name: LuaScriptName): string {
  return read(`${name}.lua`).replace(INCLUDE, (_, file: string) => read(file).trimEnd());
}
