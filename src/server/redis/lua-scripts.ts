// The Redis implementations' Lua scripts, one file per script in scripts/
// (store.lua, budget.lua, lab.lua, webhook.lua), loaded by name as BullMQ
// loads its commands: each is read and reviewed as Lua, with its key layout
// at its top, not as a string inside TypeScript. The build copies them into
// dist/ beside this module (package.json `build`); a module that runs one
// reads it once, when it is loaded, and the connection sends it by its SHA
// (redis-connection.ts `script`).
import { readFileSync } from 'node:fs';

export type LuaScriptName = 'store' | 'budget' | 'lab' | 'webhook';

export function luaScript(name: LuaScriptName): string {
  return readFileSync(new URL(`./scripts/${name}.lua`, import.meta.url), 'utf8');
}
